"""The configs apis (Kafka's ConfigHelper and ConfigAdminManager): DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs and ListConfigResources.

DescribeConfigs answers for BROKER resources (this broker's id: every setting in effect; '': the
cluster-wide dynamic defaults alone), BROKER_LOGGER (this broker's loggers and levels) and TOPIC
resources (every topic-level setting: the topic's overrides as DYNAMIC_TOPIC_CONFIG, the others from
the broker's log.* settings in effect), with Kafka's synonyms in precedence order (v1+: this
broker's dynamic value, the cluster default's, the static configuration's, the default; the
synonyms of one value in other units after the name's own), documentation and types (v3+). Any
broker answers for any topic in its metadata: the overrides come from the topic config cache, which
asks the controller for a topic it has not met (the request then waits for that answer, not on a
handler thread). Passwords are sensitive and shown as null.

AlterConfigs (the whole new set) and IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT) are
checked here first, as Kafka's ConfigAdminManager.preprocess does: a BROKER resource must name
this broker or '' (the cluster default), and its new set is checked against this broker's dynamic
configuration (server/dynamic_config.py) before the controller sees it; BROKER_LOGGER changes
(incremental only) apply here and now, to this broker alone. The rest goes to the controller, which
checks topics, stores the sets and pushes them to every broker (controller/configs.py): on its own
node directly, elsewhere forwarded over the ControllerLink (its "alter-configs" lane, whose client
id tells the controller's node that the request was forwarded and whose broker checked it), the
client answered with the controller's answer. A forwarded request reaching a broker without the
controller is answered NOT_CONTROLLER.

The controller's pushes arrive as AlterConfigs on the privileged listener from the controller's
client id (``controller-<id>``): each resource's complete set, applied at once (this broker's
dynamic configuration, or the topic's overrides and its logs), never forwarded.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.common.config_def import Setting
from kafkalite.common.errors import ApiError
from kafkalite.controller import group_configs as G
from kafkalite.controller.assignment import validate_topic_name
from kafkalite.controller.configs import Op, ResourceChange, check_duplicates
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_configs as ac
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.protocol.messages import incremental_alter_configs as iac
from kafkalite.protocol.messages import list_config_resources as lcr
from kafkalite.storage.config import TOPIC_SETTINGS, LogConfig

from ..config import SETTINGS, SETTINGS_BY_NAME, BrokerConfig
from ..controller_node import active
from ..dynamic_config import BrokerLoggers, DynamicBrokerConfig, setting_for
from ..forwarding import PUSHED, forward, forwarded, origin
from ..group_configs import GroupConfigCache
from ..metadata_cache import MetadataCache
from ..responses import respond
from ..topic_configs import ControllerLink, TopicConfigCache

log = logging.getLogger("kafkalite.server.handlers.configs")

RESOURCE_NAMES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
CONFIG_TYPES = {"int": dc.TYPE_INT, "long": dc.TYPE_LONG, "double": dc.TYPE_DOUBLE, "string": dc.TYPE_STRING,
                "password": dc.TYPE_PASSWORD, "list": dc.TYPE_LIST, "bool": dc.TYPE_BOOLEAN,
                "map": dc.TYPE_STRING}  # Kafka declares its map-like settings as strings
SOURCE_DYNAMIC_BROKER_LOGGER_CONFIG = 6  # Kafka's ConfigSource id
# Broker settings that stand for one value in several units (Kafka's brokerConfigSynonyms), the
# one that wins first: the topic settings' synonym groups of more than one name.
BROKER_SYNONYMS: tuple[tuple[str, ...], ...] = tuple(
    s.synonym_names for s in TOPIC_SETTINGS if len(s.synonyms) > 1)
_SYNONYMS_OF = {name: group for group in BROKER_SYNONYMS for name in group}
LANE = "alter-configs"  # the ControllerLink lane forwarded changes take
FORWARDED = forwarded(LANE)
FORWARD_VERSIONS: dict[int, int] = {ApiKey.ALTER_CONFIGS: 2, ApiKey.INCREMENTAL_ALTER_CONFIGS: 1}
# ListConfigResources v1's types, in the order Kafka lists them.
LISTED_TYPES = (lcr.RESOURCE_GROUP, lcr.RESOURCE_CLIENT_METRICS, dc.RESOURCE_BROKER_LOGGER,
                dc.RESOURCE_BROKER, dc.RESOURCE_TOPIC)

SendResponse = Callable[[Response], None]
Entry = Any  # a DescribeConfigsResourceResult
SOURCE_GROUP_CONFIG = 8  # DescribeConfigsResponse.ConfigSource.GROUP_CONFIG (KIP-848)
R = dc.RESPONSE
ENTRY = R["results"]["configs"]
SYNONYM = ENTRY["synonyms"]


class ConfigDescriber:
    """The entries DescribeConfigs (and CreateTopics v5+) show, from this broker's configuration in
    effect (``dynamic``: its dynamic configuration over ``config``)."""

    def __init__(self, config: BrokerConfig, dynamic: DynamicBrokerConfig | None = None,
                 loggers: BrokerLoggers | None = None) -> None:
        self.config = config
        self.dynamic = dynamic if dynamic is not None else DynamicBrokerConfig(config)
        self.loggers = loggers if loggers is not None else BrokerLoggers()
        self.explicit = config.explicit
        self.static_values = config.values

    @property
    def values(self) -> dict[str, Any]:
        return self.dynamic.values

    @property
    def log_defaults(self) -> LogConfig:
        return self.dynamic.log_config()

    def _text(self, setting: Setting, value: Any) -> str | None:
        if setting.type == "password" or value is None:
            return None
        return setting.render(value)

    def _broker_synonyms(self, names: Iterable[str], per_broker: bool = True) -> list[Any]:
        """Kafka's configSynonyms: where each of ``names`` is set, source by source in precedence
        order (this broker's dynamic configs, unless describing the cluster default, then the
        cluster default's, the static configuration, the defaults)."""
        names = list(names)
        out = []
        dynamic = self.dynamic
        sources = [(dynamic.broker_configs, dc.SOURCE_DYNAMIC_BROKER_CONFIG)] if per_broker else []
        sources.append((dynamic.default_configs, dc.SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG))
        for props, source in sources:
            for n in names:
                found = setting_for(n)
                if n in props and found is not None:
                    text = None if found[0].type == "password" else props[n]
                    out.append(SYNONYM(name=n, value=text, source=source))
        names = [n for n in names if n in SETTINGS_BY_NAME]  # a listener override is only dynamic
        out += [SYNONYM(name=n, value=self._text(SETTINGS_BY_NAME[n], self.static_values[n]),
                        source=dc.SOURCE_STATIC_BROKER_CONFIG) for n in names if n in self.explicit]
        for n in names:
            setting = SETTINGS_BY_NAME[n]
            if setting.default is not None:
                out.append(SYNONYM(name=n, value=self._text(setting, setting.default),
                                   source=dc.SOURCE_DEFAULT_CONFIG))
        return out

    @staticmethod
    def _entry(name: str, value: str | None, synonyms: list[Any], read_only: bool, sensitive: bool,
               config_type: int, doc: str | None, with_synonyms: bool) -> Entry:
        source = synonyms[0].source if synonyms else dc.SOURCE_DEFAULT_CONFIG
        return ENTRY(name=name, value=value, read_only=read_only,
                     is_default=source == dc.SOURCE_DEFAULT_CONFIG, config_source=source,
                     is_sensitive=sensitive, synonyms=synonyms if with_synonyms else [],
                     config_type=config_type, documentation=doc)

    def _synonyms_from(self, name: str, per_broker: bool) -> list[Any]:
        found = self._broker_synonyms(_SYNONYMS_OF.get(name, (name,)), per_broker)
        # As Kafka: a description of log.roll.hours leaves out log.roll.ms, which outranks it.
        while found and found[0].name != name:
            found.pop(0)
        return found

    def broker_entries(self, keys: list[str] | None, synonyms: bool = False,
                       docs: bool = False) -> list[Entry]:
        """This broker's settings in effect, and the listener overrides set dynamically; read-only
        unless the update mode says otherwise."""
        out = []
        values = self.values
        dynamic = self.dynamic
        dynamic_names = dynamic.broker_configs.keys() | dynamic.default_configs.keys()
        overrides = list(dynamic_names - SETTINGS_BY_NAME.keys())
        for name in sorted([s.name for s in SETTINGS] + overrides):
            found = setting_for(name)
            if found is None or (keys is not None and name not in keys):  # null asks for all, [] for none
                continue
            s, mode = found
            out.append(self._entry(name, self._text(s, values.get(name)), self._synonyms_from(name, True),
                                   mode == "read-only", s.type == "password", CONFIG_TYPES[s.type],
                                   s.doc if docs else None, synonyms))
        return out

    def default_entries(self, keys: list[str] | None, synonyms: bool = False,
                        docs: bool = False) -> list[Entry]:
        """The cluster-wide dynamic defaults (the broker named ''): only the settings set there, as
        Kafka lists them."""
        out = []
        for name in sorted(self.dynamic.default_configs):
            found = setting_for(name)
            if found is None or (keys is not None and name not in keys):
                continue
            s, mode = found
            text = None if s.type == "password" else self.dynamic.default_configs[name]
            out.append(self._entry(name, text, self._synonyms_from(name, False), mode == "read-only",
                                   s.type == "password", CONFIG_TYPES[s.type], s.doc if docs else None,
                                   synonyms))
        return out

    def logger_entries(self, keys: list[str] | None) -> list[Entry]:
        return [ENTRY(name=name, value=level, read_only=False, is_default=False,
                      config_source=SOURCE_DYNAMIC_BROKER_LOGGER_CONFIG, is_sensitive=False, synonyms=[],
                      config_type=dc.TYPE_STRING, documentation=None)
                for name, level in self.loggers.levels(keys).items()]

    def topic_entries(self, overrides: dict[str, str], keys: list[str] | None = None, synonyms: bool = False,
                      docs: bool = False) -> list[Entry]:
        """Every topic-level setting of a topic with these overrides (checked by the controller)."""
        values = LogConfig.from_properties(overrides, self.log_defaults).to_properties()
        out = []
        for s in TOPIC_SETTINGS:
            if keys is not None and s.name not in keys:  # null asks for all, [] for none
                continue
            found = self._broker_synonyms(s.synonym_names)
            if s.name in overrides:
                found.insert(0, SYNONYM(name=s.name, value=values[s.name],
                                        source=dc.SOURCE_DYNAMIC_TOPIC_CONFIG))
            out.append(self._entry(s.name, values[s.name], found, False, False, CONFIG_TYPES[s.type],
                                   s.doc if docs else None, synonyms))
        return out


class ConfigApis:
    def __init__(self, node_id: int, describer: ConfigDescriber, topic_configs: TopicConfigCache,
                 metadata_cache: MetadataCache, send_response: SendResponse, controller: Any = None,
                 link: ControllerLink | None = None, node_listeners: frozenset[str] = frozenset(),
                 group_configs: GroupConfigCache | None = None) -> None:
        self.node_id = node_id
        self.group_configs = group_configs if group_configs is not None else GroupConfigCache()
        self.describer = describer
        self.dynamic = describer.dynamic
        self.loggers = describer.loggers
        self.topic_configs = topic_configs
        self.cache = metadata_cache
        self.send_response = send_response
        self.controller = controller  # on the controller's node
        self.link = link  # elsewhere
        # Where other nodes' requests arrive besides the privileged listener: controller.listener.names.
        self.node_listeners = node_listeners

    # --- DescribeConfigs ------------------------------------------------------------------------

    def describe_configs(self, request: Request) -> Response | None:
        req, version = request.body, request.api_version
        synonyms = version >= 1 and req.include_synonyms
        docs = version >= 3 and req.include_documentation
        results, asking = [], []
        for res in req.resources:
            result = R["results"](error_code=E.NONE, error_message=None, resource_type=res.resource_type,
                                  resource_name=res.resource_name, configs=[])
            try:
                if self._describe(res, result, synonyms, docs):
                    asking.append((res, result))
            except ApiError as e:
                log.info("DescribeConfigs of %s %r refused: %s",
                         RESOURCE_NAMES.get(res.resource_type, "UNKNOWN"), res.resource_name, e.message)
                result.error_code, result.error_message = e.code, e.message
            results.append(result)
        body = R(throttle_time_ms=0, results=results)
        if not asking:
            return respond(request, body)

        def answered(found: dict[str, dict[str, str] | None]) -> None:
            for res, result in asking:
                name = res.resource_name
                if name not in found:
                    result.error_code = E.REQUEST_TIMED_OUT
                    result.error_message = "The controller did not answer in time."
                elif found[name] is None:
                    result.error_code = E.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    result.configs = self.describer.topic_entries(found[name] or {}, res.configuration_keys,
                                                                  synonyms, docs)
            self.send_response(respond(request, body))

        self.topic_configs.fetch(sorted({res.resource_name for res, _ in asking}), answered)
        return None

    def _check_broker_id(self, name: str, expected: int, empty_allowed: bool = True) -> None:
        """DescribeConfigs' check (Kafka's ConfigHelper): a broker resource names this broker, or
        '' (not for BROKER_LOGGER)."""
        if not name:
            if empty_allowed:
                return
            raise ApiError(E.INVALID_REQUEST, "Broker id must not be empty")
        try:
            broker_id = int(name)
        except ValueError:
            raise ApiError(E.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}") from None
        if broker_id != expected:
            if empty_allowed:
                raise ApiError(E.INVALID_REQUEST, f"Unexpected broker id, expected {expected} or empty "
                                                  f"string, but received {name}")
            raise ApiError(E.INVALID_REQUEST,
                           f"Unexpected broker id, expected {expected} but received {name}")

    def _check_node_id(self, name: str, logger: bool = False) -> None:
        """The alter apis' check (Kafka's ConfigAdminManager, RuntimeLoggerManager): the resource
        names this node."""
        try:
            node_id = int(name)
        except ValueError:
            raise ApiError(E.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}") from None
        if node_id != self.node_id:
            if logger:
                raise ApiError(E.INVALID_REQUEST,
                               f"Unexpected node id. Expected {self.node_id}, but received {node_id}")
            raise ApiError(E.INVALID_REQUEST,
                           f"Unexpected broker id, expected {self.node_id}, but received {name}")

    def _describe(self, res: Any, result: Any, synonyms: bool, docs: bool) -> bool:
        """Fill ``result``; True if the topic's overrides must be asked for first."""
        name, kind = res.resource_name, res.resource_type
        if kind == dc.RESOURCE_BROKER:
            self._check_broker_id(name, self.node_id)
            if not name:
                result.configs = self.describer.default_entries(res.configuration_keys, synonyms, docs)
            else:
                result.configs = self.describer.broker_entries(res.configuration_keys, synonyms, docs)
            return False
        if kind == dc.RESOURCE_BROKER_LOGGER:
            self._check_broker_id(name, self.node_id, empty_allowed=False)
            result.configs = self.describer.logger_entries(res.configuration_keys)
            return False
        if kind == G.RESOURCE_GROUP:
            if not name:
                raise ApiError(E.INVALID_REQUEST, "Group name must not be empty")
            result.configs = self._group_entries(name, res.configuration_keys, synonyms, docs)
            return False
        if kind != dc.RESOURCE_TOPIC:
            raise ApiError(E.INVALID_REQUEST,
                           f"Unsupported resource type: {RESOURCE_NAMES.get(kind, 'UNKNOWN')}")
        validate_topic_name(name)
        if not self.topic_configs.local and name not in self.cache.snapshot.topics:
            result.error_code = E.UNKNOWN_TOPIC_OR_PARTITION
            return False
        overrides = self.topic_configs.overrides(name)
        if overrides is None:
            if self.topic_configs.local:  # the controller has no such topic
                result.error_code = E.UNKNOWN_TOPIC_OR_PARTITION
                return False
            return True
        result.configs = self.describer.topic_entries(overrides, res.configuration_keys, synonyms, docs)
        return False

    def _group_entries(self, group: str, keys: list[str] | None, synonyms: bool, docs: bool) -> list[Entry]:
        """Every group config (Kafka's ConfigHelper for GROUP): the group's value (source
        GROUP_CONFIG) or the broker's default (DEFAULT_CONFIG); a group need not exist."""
        overrides = self.group_configs.overrides(group)
        in_effect = self.group_configs.group_config(group)
        out = []
        for s in G.GROUP_SETTINGS:
            if keys is not None and s.name not in keys:
                continue
            value = str(getattr(in_effect, s.name.replace(".", "_")))
            found = [SYNONYM(name=s.name, value=overrides[s.name], source=SOURCE_GROUP_CONFIG)] \
                if s.name in overrides else []
            out.append(self._group_entry(s, value, found, synonyms, docs))
        return out

    @staticmethod
    def _group_entry(s: G.GroupSetting, value: str, found: list[Any], synonyms: bool, docs: bool) -> Entry:
        source = found[0].source if found else dc.SOURCE_DEFAULT_CONFIG
        return ENTRY(name=s.name, value=value, read_only=False, is_default=not found, config_source=source,
                     is_sensitive=False, synonyms=found if synonyms else [],
                     config_type=dc.TYPE_INT if s.type == "int" else dc.TYPE_STRING,
                     documentation=s.doc if docs else None)

    # --- AlterConfigs, IncrementalAlterConfigs --------------------------------------------------

    def alter_configs(self, request: Request) -> Response | None:
        return self._alter(request, incremental=False)

    def incremental_alter_configs(self, request: Request) -> Response | None:
        return self._alter(request, incremental=True)

    def _origin(self, request: Request, pattern: re.Pattern[str]) -> int | None:
        return origin(request, pattern, self.node_listeners)

    def _alter(self, request: Request, incremental: bool) -> Response | None:
        req = request.body
        M = iac if incremental else ac
        if not incremental and self._origin(request, PUSHED) is not None:
            return self._apply_push(request)
        forwarded_by = self._origin(request, FORWARDED)
        results: list[tuple[int, str | None]] = [(E.NONE, None)] * len(req.resources)
        pending: list[tuple[int, ResourceChange]] = []
        seen: dict[tuple[int, str], int] = {}
        repeated: set[int] = set()
        for i, res in enumerate(req.resources):
            first = seen.setdefault((res.resource_type, res.resource_name), i)
            if first != i:
                repeated.update((first, i))
        for i, res in enumerate(req.resources):
            if i in repeated:
                results[i] = (E.INVALID_REQUEST, "Each resource must appear at most once.")
                continue
            ops = tuple(Op(c.name, c.config_operation if incremental else iac.OP_SET, c.value)
                        for c in res.configs)
            try:
                change = self._preprocess(res.resource_type, res.resource_name, ops, incremental,
                                          req.validate_only, forwarded_by)
            except ApiError as e:
                log.info("%s of %s %r refused: %s", M.RESPONSE.name.removesuffix("Response"),
                         RESOURCE_NAMES.get(res.resource_type, "UNKNOWN"), res.resource_name, e.message)
                results[i] = (e.code, e.message)
                continue
            if change is not None:
                pending.append((i, change))

        def body() -> Any:
            return M.RESPONSE(throttle_time_ms=0, responses=[
                M.RESPONSE["responses"](error_code=code, error_message=message,
                                        resource_type=res.resource_type, resource_name=res.resource_name)
                for (code, message), res in zip(results, req.resources, strict=True)])

        if not pending:
            return respond(request, body())

        def answered(outcomes: list[tuple[int, str | None]]) -> None:
            for (i, _), outcome in zip(pending, outcomes, strict=True):
                results[i] = outcome
            self.send_response(respond(request, body()))

        changes = [c for _, c in pending]
        if (controller := active(self.controller)) is not None:
            def done(future: concurrent.futures.Future) -> None:
                try:
                    outcomes = future.result()
                except Exception as e:  # logged by the controller
                    outcomes = [(E.UNKNOWN_SERVER_ERROR, f"The controller failed: {e}")] * len(changes)
                answered(outcomes)

            controller.alter_configs(changes, req.validate_only).add_done_callback(done)
        elif forwarded_by is not None or self.link is None:
            answered([(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message)] * len(changes))
        else:
            self._forward(request.api_key, changes, req.validate_only, incremental, answered)
        return None

    def _preprocess(self, kind: int, name: str, ops: tuple[Op, ...], incremental: bool,
                    validate_only: bool, forwarded_by: int | None) -> ResourceChange | None:
        """What this broker checks and does itself, as Kafka's ConfigAdminManager.preprocess
        (None: nothing left for the controller)."""
        check_duplicates(ops)
        nulls = [o.name for o in ops if o.value is None and o.op != iac.OP_DELETE]
        if nulls:
            raise ApiError(E.INVALID_REQUEST, f"Null value not supported for : {', '.join(nulls)}")
        if kind == dc.RESOURCE_BROKER_LOGGER and incremental:
            self._check_node_id(name, logger=True)
            self.loggers.alter(ops, validate_only)
            return None
        if kind == dc.RESOURCE_BROKER:
            if forwarded_by is not None:  # checked by the broker that forwarded it
                return ResourceChange(kind, name, ops, incremental)
            if name:
                self._check_node_id(name)
            new = self.dynamic.new_set(name, ops, incremental)
            current = self.dynamic.broker_configs if name else self.dynamic.default_configs
            # To the controller as the changes from the set this broker knows to the new one.
            sets = tuple(Op(k, iac.OP_SET, v) for k, v in sorted(new.items()))
            if not incremental:
                return ResourceChange(kind, name, sets, False)
            deletes = tuple(Op(k, iac.OP_DELETE, None) for k in sorted(current) if k not in new)
            return ResourceChange(kind, name, sets + deletes, True)
        if kind == dc.RESOURCE_TOPIC:
            validate_topic_name(name)
            return ResourceChange(kind, name, ops, incremental)
        if kind == G.RESOURCE_GROUP:  # checked whole by the controller (GroupConfig.validate)
            if not name:
                raise ApiError(E.INVALID_REQUEST, "Group name must not be empty")
            return ResourceChange(kind, name, ops, incremental)
        if kind == lcr.RESOURCE_CLIENT_METRICS:
            raise ApiError(E.INVALID_REQUEST, f"Unsupported resource type: {RESOURCE_NAMES[kind]}")
        # AlterConfigs has no BROKER_LOGGER: Kafka's "unknown" then.
        raise ApiError(E.INVALID_REQUEST, f"Unknown resource type {kind}")

    def _forward(self, api_key: int, changes: list[ResourceChange], validate_only: bool, incremental: bool,
                 answered: Callable[[list[tuple[int, str | None]]], None]) -> None:
        M = iac if incremental else ac
        Q = M.REQUEST
        config = Q["resources"]["configs"]
        body = Q(validate_only=validate_only, resources=[
            Q["resources"](resource_type=c.resource_type, resource_name=c.resource_name, configs=[
                config(name=o.name, value=o.value, **({"config_operation": o.op} if incremental else {}))
                for o in c.ops]) for c in changes])
        link = self.link
        assert link is not None

        def failed(why: str) -> list[tuple[int, str | None]]:
            return [(E.REQUEST_TIMED_OUT, f"The controller did not answer: {why}")] * len(changes)

        def on_response(response: Any) -> None:
            outcomes = [(r.error_code, r.error_message) for r in response.responses]
            answered(outcomes if len(outcomes) == len(changes) else failed("a short answer"))

        forward(link, LANE, api_key, FORWARD_VERSIONS[api_key], body, f"{len(changes)} config changes",
                on_response, lambda why: answered(failed(why)))

    def _apply_push(self, request: Request) -> Response:
        """The controller's complete sets: applied here and now (AlterConfigs semantics)."""
        req = request.body
        for res in req.resources:
            props = {c.name: c.value for c in res.configs if c.value is not None}
            if res.resource_type == dc.RESOURCE_BROKER:
                self.dynamic.update(res.resource_name, props)
            elif res.resource_type == dc.RESOURCE_TOPIC:
                self.topic_configs.update(res.resource_name, props)
            elif res.resource_type == G.RESOURCE_GROUP:
                self.group_configs.update(res.resource_name, props)
        return respond(request, ac.RESPONSE(throttle_time_ms=0, responses=[
            ac.RESPONSE["responses"](error_code=E.NONE, resource_type=res.resource_type,
                                     resource_name=res.resource_name) for res in req.resources]))

    # --- ListConfigResources --------------------------------------------------------------------

    def list_config_resources(self, request: Request) -> Response:
        """Kafka 4.1's: v0 lists client metrics resources (kafkalite has none); v1 the types asked
        (none: every type), in Kafka's order: the groups with configs, client metrics (none),
        every broker with an endpoint on the request's listener as BROKER_LOGGER and as BROKER,
        every topic; a type Kafka does not list
        there fails the whole request UNSUPPORTED_VERSION."""
        req, version = request.body, request.api_version
        L = lcr.RESPONSE
        if version == 0:
            return respond(request, L(throttle_time_ms=0, error_code=E.NONE, config_resources=[]))
        asked = set(req.resource_types)
        if asked - set(LISTED_TYPES):
            return respond(request, L(throttle_time_ms=0, error_code=E.UNSUPPORTED_VERSION,
                                      config_resources=[]))
        snapshot = self.cache.snapshot
        # Kafka's metadataCache.getBrokerNodes(listener): the brokers reachable on this listener.
        brokers = [str(b) for b, info in sorted(snapshot.brokers.items())
                   if any(e.name == request.listener for e in info.endpoints)]
        names = {dc.RESOURCE_BROKER_LOGGER: brokers, dc.RESOURCE_BROKER: brokers,
                 dc.RESOURCE_TOPIC: sorted(snapshot.topics), lcr.RESOURCE_GROUP: self.group_configs.groups()}
        resources = [L["config_resources"](resource_name=name, resource_type=kind)
                     for kind in LISTED_TYPES if not asked or kind in asked for name in names.get(kind, [])]
        return respond(request, L(throttle_time_ms=0, error_code=E.NONE, config_resources=resources))
