"""DescribeConfigs (Kafka's ConfigHelper).

DescribeConfigs answers for BROKER resources (this broker's settings, from the settings table of
server/config.py) and TOPIC resources (every topic-level setting: the topic's overrides as
DYNAMIC_TOPIC_CONFIG, the others from the broker's log.* settings, STATIC_BROKER_CONFIG when set
in its configuration, else DEFAULT_CONFIG), with Kafka's synonyms (v1+), documentation and types
(v3+). Any broker answers for any topic in its metadata: the overrides come from the topic
config cache, which asks the controller for a topic it has not met (the request then waits for
that answer, not on a handler thread). Passwords are sensitive and shown as null.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.common.config_def import Setting
from kafkalite.common.errors import ApiError
from kafkalite.controller.assignment import validate_topic_name
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.storage.config import TOPIC_SETTINGS, LogConfig

from ..config import SETTINGS, SETTINGS_BY_NAME, BrokerConfig
from ..metadata_cache import MetadataCache
from ..responses import respond
from ..topic_configs import TopicConfigCache

log = logging.getLogger("kafkalite.server.handlers.configs")

RESOURCE_NAMES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
CONFIG_TYPES = {"int": dc.TYPE_INT, "long": dc.TYPE_LONG, "double": dc.TYPE_DOUBLE, "string": dc.TYPE_STRING,
                "password": dc.TYPE_PASSWORD, "list": dc.TYPE_LIST, "bool": dc.TYPE_BOOLEAN,
                "map": dc.TYPE_STRING}  # Kafka declares its map-like settings as strings
# Broker settings that stand for one value in several units (Kafka's brokerConfigSynonyms), the
# one that wins first: the topic settings' synonym groups of more than one name.
BROKER_SYNONYMS: tuple[tuple[str, ...], ...] = tuple(
    s.synonym_names for s in TOPIC_SETTINGS if len(s.synonyms) > 1)
_SYNONYMS_OF = {name: group for group in BROKER_SYNONYMS for name in group}

SendResponse = Callable[[Response], None]
Entry = Any  # a DescribeConfigsResourceResult
R = dc.RESPONSE
ENTRY = R["results"]["configs"]
SYNONYM = ENTRY["synonyms"]


class ConfigDescriber:
    """The entries DescribeConfigs (and CreateTopics v5+) show, from this broker's configuration."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.values = config.values
        self.explicit = config.explicit
        self.log_defaults = config.log_config()

    def _text(self, setting: Setting, value: Any) -> str | None:
        if setting.type == "password" or value is None:
            return None
        return setting.render(value)

    def _broker_synonyms(self, names: Iterable[str]) -> list[Any]:
        """Kafka's configSynonyms: where each of ``names`` is set, the static configuration first,
        then the defaults (kafkalite has no dynamic broker configs)."""
        names = list(names)
        out = [SYNONYM(name=n, value=self._text(SETTINGS_BY_NAME[n], self.values[n]),
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

    def broker_entries(self, keys: list[str] | None, synonyms: bool = False,
                       docs: bool = False) -> list[Entry]:
        """This broker's settings; every one is read-only (kafkalite changes none at runtime)."""
        out = []
        for s in sorted(SETTINGS, key=lambda s: s.name):
            if keys is not None and s.name not in keys:  # null asks for all, [] for none
                continue
            group = _SYNONYMS_OF.get(s.name, (s.name,))
            found = self._broker_synonyms(group)
            # As Kafka: a description of log.roll.hours leaves out log.roll.ms, which outranks it.
            while found and found[0].name != s.name:
                found.pop(0)
            out.append(self._entry(s.name, self._text(s, self.values[s.name]), found, True,
                                   s.type == "password", CONFIG_TYPES[s.type], s.doc if docs else None,
                                   synonyms))
        return out

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
                 metadata_cache: MetadataCache, send_response: SendResponse) -> None:
        self.node_id = node_id
        self.describer = describer
        self.topic_configs = topic_configs
        self.cache = metadata_cache
        self.send_response = send_response

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

    def _describe(self, res: Any, result: Any, synonyms: bool, docs: bool) -> bool:
        """Fill ``result``; True if the topic's overrides must be asked for first."""
        name, kind = res.resource_name, res.resource_type
        if kind == dc.RESOURCE_BROKER:
            if not name:
                return False  # the cluster-wide dynamic defaults: kafkalite has none
            try:
                broker_id = int(name)
            except ValueError:
                raise ApiError(E.INVALID_REQUEST,
                               f"Broker id must be an integer, but it is: {name}") from None
            if broker_id != self.node_id:
                raise ApiError(E.INVALID_REQUEST, f"Unexpected broker id, expected {self.node_id} or empty "
                                                  f"string, but received {name}")
            result.configs = self.describer.broker_entries(res.configuration_keys, synonyms, docs)
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
