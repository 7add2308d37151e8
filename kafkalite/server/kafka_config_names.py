"""The names of every broker configuration Apache Kafka defines, as data in one place.

kafkalite accepts these names even where it does not act on them, so that a Kafka
``server.properties`` loads as it is: ``BrokerConfig.ignored`` lists the ones it does not act on and
the broker logs them once at startup, as Kafka logs supplied configurations it does not use.

Where the list came from (apache/kafka and apache/kafka-site on GitHub):

- the names defined in ``AbstractKafkaConfig.CONFIG_DEF`` on Kafka's 3.9 branch (October 2024,
  3.9.0), internal ones (``defineInternal``) included. It merges ServerConfigs,
  SocketServerConfigs, KRaftConfigs, QuorumConfig, ReplicationConfigs, ServerLogConfigs
  (``LogConfig.SERVER_CONFIG_DEF``), CleanerConfig, GroupCoordinatorConfig, ShareGroupConfig,
  TransactionLogConfigs, TransactionStateManagerConfigs, QuotaConfigs, ZkConfigs,
  BrokerSecurityConfigs (the SSL and SASL configs), DelegationTokenManagerConfigs,
  PasswordEncoderConfigs, MetricConfigs and RemoteLogManagerConfig;
- the same on trunk in October 2024 (4.0.0-SNAPSHOT), which adds ShareCoordinatorConfig;
- every broker configuration documented for Kafka 4.1 (``41/generated/kafka_config.html``), which
  adds the streams group, share group, OAuth assertion and ``add.partitions.to.txn.*`` settings.
- the properties Kafka's authorizer (StandardAuthorizer, AclAuthorizer) reads from the broker's
  configuration: ``super.users``, ``allow.everyone.if.no.acl.found``;
- the dynamic-only broker configurations of Kafka's ``DynamicConfig.Broker`` (set by AlterConfigs,
  not in ``CONFIG_DEF``): ``replica.alter.log.dirs.io.max.bytes.per.second``.

Names removed in 4.0 (``zookeeper.*``, ``control.plane.listener.name``,
``log.message.format.version``, ...) stay: a 3.9 file may hold them.

Kafka also reads per-listener forms of its settings: ``listener.name.<listener>.<setting>``, and for
SASL settings ``listener.name.<listener>.<mechanism>.<setting>`` (for example
``listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config``); ``split_listener_prefix`` recognises them.
"""

from __future__ import annotations

import re

__all__ = ["KAFKA_BROKER_CONFIGS", "is_kafka_config", "split_listener_prefix"]

_NAMES = """
add.partitions.to.txn.retry.backoff.max.ms
add.partitions.to.txn.retry.backoff.ms
advertised.listeners
allow.everyone.if.no.acl.found
alter.config.policy.class.name
alter.log.dirs.replication.quota.window.num
alter.log.dirs.replication.quota.window.size.seconds
authorizer.class.name
auto.create.topics.enable
auto.include.jmx.reporter
auto.leader.rebalance.enable
background.threads
broker.heartbeat.interval.ms
broker.id
broker.id.generation.enable
broker.rack
broker.session.timeout.ms
client.quota.callback.class
compression.gzip.level
compression.lz4.level
compression.type
compression.zstd.level
connection.failed.authentication.delay.ms
connections.max.idle.ms
connections.max.reauth.ms
control.plane.listener.name
controlled.shutdown.enable
controlled.shutdown.max.retries
controlled.shutdown.retry.backoff.ms
controller.listener.names
controller.quorum.append.linger.ms
controller.quorum.bootstrap.servers
controller.quorum.election.backoff.max.ms
controller.quorum.election.timeout.ms
controller.quorum.fetch.timeout.ms
controller.quorum.request.timeout.ms
controller.quorum.retry.backoff.ms
controller.quorum.voters
controller.quota.window.num
controller.quota.window.size.seconds
controller.socket.timeout.ms
create.topic.policy.class.name
default.replication.factor
delegation.token.expiry.check.interval.ms
delegation.token.expiry.time.ms
delegation.token.master.key
delegation.token.max.lifetime.ms
delegation.token.secret.key
delete.records.purgatory.purge.interval.requests
delete.topic.enable
early.start.listeners
eligible.leader.replicas.enable
fetch.max.bytes
fetch.purgatory.purge.interval.requests
group.consumer.assignors
group.consumer.heartbeat.interval.ms
group.consumer.max.heartbeat.interval.ms
group.consumer.max.session.timeout.ms
group.consumer.max.size
group.consumer.migration.policy
group.consumer.min.heartbeat.interval.ms
group.consumer.min.session.timeout.ms
group.consumer.session.timeout.ms
group.coordinator.append.linger.ms
group.coordinator.new.enable
group.coordinator.rebalance.protocols
group.coordinator.threads
group.initial.rebalance.delay.ms
group.max.session.timeout.ms
group.max.size
group.min.session.timeout.ms
group.share.assignors
group.share.delivery.count.limit
group.share.enable
group.share.heartbeat.interval.ms
group.share.max.groups
group.share.max.heartbeat.interval.ms
group.share.max.record.lock.duration.ms
group.share.max.session.timeout.ms
group.share.max.share.sessions
group.share.max.size
group.share.min.heartbeat.interval.ms
group.share.min.record.lock.duration.ms
group.share.min.session.timeout.ms
group.share.partition.max.record.locks
group.share.record.lock.duration.ms
group.share.session.timeout.ms
group.streams.heartbeat.interval.ms
group.streams.max.heartbeat.interval.ms
group.streams.max.session.timeout.ms
group.streams.max.size
group.streams.max.standby.replicas
group.streams.min.heartbeat.interval.ms
group.streams.min.session.timeout.ms
group.streams.num.standby.replicas
group.streams.session.timeout.ms
initial.broker.registration.timeout.ms
inter.broker.listener.name
inter.broker.protocol.version
kafka.metrics.polling.interval.secs
kafka.metrics.reporters
leader.imbalance.check.interval.seconds
leader.imbalance.per.broker.percentage
listener.security.protocol.map
listeners
log.cleaner.backoff.ms
log.cleaner.dedupe.buffer.size
log.cleaner.delete.retention.ms
log.cleaner.enable
log.cleaner.io.buffer.load.factor
log.cleaner.io.buffer.size
log.cleaner.io.max.bytes.per.second
log.cleaner.max.compaction.lag.ms
log.cleaner.min.cleanable.ratio
log.cleaner.min.compaction.lag.ms
log.cleaner.threads
log.cleanup.policy
log.dir
log.dir.failure.timeout.ms
log.dirs
log.flush.interval.messages
log.flush.interval.ms
log.flush.offset.checkpoint.interval.ms
log.flush.scheduler.interval.ms
log.flush.start.offset.checkpoint.interval.ms
log.index.interval.bytes
log.index.size.max.bytes
log.initial.task.delay.ms
log.local.retention.bytes
log.local.retention.ms
log.message.downconversion.enable
log.message.format.version
log.message.timestamp.after.max.ms
log.message.timestamp.before.max.ms
log.message.timestamp.difference.max.ms
log.message.timestamp.type
log.preallocate
log.retention.bytes
log.retention.check.interval.ms
log.retention.hours
log.retention.minutes
log.retention.ms
log.roll.hours
log.roll.jitter.hours
log.roll.jitter.ms
log.roll.ms
log.segment.bytes
log.segment.delete.delay.ms
max.connection.creation.rate
max.connections
max.connections.per.ip
max.connections.per.ip.overrides
max.incremental.fetch.session.cache.slots
max.request.partition.size.limit
message.max.bytes
metadata.log.dir
metadata.log.max.record.bytes.between.snapshots
metadata.log.max.snapshot.interval.ms
metadata.log.segment.bytes
metadata.log.segment.min.bytes
metadata.log.segment.ms
metadata.max.idle.interval.ms
metadata.max.retention.bytes
metadata.max.retention.ms
metric.reporters
metrics.num.samples
metrics.recording.level
metrics.sample.window.ms
min.insync.replicas
node.id
num.io.threads
num.network.threads
num.partitions
num.recovery.threads.per.data.dir
num.replica.alter.log.dirs.threads
num.replica.fetchers
offset.metadata.max.bytes
offsets.commit.required.acks
offsets.commit.timeout.ms
offsets.load.buffer.size
offsets.retention.check.interval.ms
offsets.retention.minutes
offsets.topic.compression.codec
offsets.topic.num.partitions
offsets.topic.replication.factor
offsets.topic.segment.bytes
password.encoder.cipher.algorithm
password.encoder.iterations
password.encoder.key.length
password.encoder.keyfactory.algorithm
password.encoder.old.secret
password.encoder.secret
principal.builder.class
process.roles
producer.id.expiration.check.interval.ms
producer.id.expiration.ms
producer.purgatory.purge.interval.requests
queued.max.request.bytes
queued.max.requests
quota.window.num
quota.window.size.seconds
remote.fetch.max.wait.ms
remote.list.offsets.request.timeout.ms
remote.log.index.file.cache.total.size.bytes
remote.log.manager.copier.thread.pool.size
remote.log.manager.copy.max.bytes.per.second
remote.log.manager.copy.quota.window.num
remote.log.manager.copy.quota.window.size.seconds
remote.log.manager.expiration.thread.pool.size
remote.log.manager.fetch.max.bytes.per.second
remote.log.manager.fetch.quota.window.num
remote.log.manager.fetch.quota.window.size.seconds
remote.log.manager.task.interval.ms
remote.log.manager.task.retry.backoff.max.ms
remote.log.manager.task.retry.backoff.ms
remote.log.manager.task.retry.jitter
remote.log.manager.thread.pool.size
remote.log.metadata.custom.metadata.max.bytes
remote.log.metadata.manager.class.name
remote.log.metadata.manager.class.path
remote.log.metadata.manager.impl.prefix
remote.log.metadata.manager.listener.name
remote.log.reader.max.pending.tasks
remote.log.reader.threads
remote.log.storage.manager.class.name
remote.log.storage.manager.class.path
remote.log.storage.manager.impl.prefix
remote.log.storage.system.enable
replica.alter.log.dirs.io.max.bytes.per.second
replica.fetch.backoff.ms
replica.fetch.max.bytes
replica.fetch.min.bytes
replica.fetch.response.max.bytes
replica.fetch.wait.max.ms
replica.high.watermark.checkpoint.interval.ms
replica.lag.time.max.ms
replica.selector.class
replica.socket.receive.buffer.bytes
replica.socket.timeout.ms
replication.quota.window.num
replication.quota.window.size.seconds
request.timeout.ms
reserved.broker.max.id
sasl.client.callback.handler.class
sasl.enabled.mechanisms
sasl.jaas.config
sasl.kerberos.kinit.cmd
sasl.kerberos.min.time.before.relogin
sasl.kerberos.principal.to.local.rules
sasl.kerberos.service.name
sasl.kerberos.ticket.renew.jitter
sasl.kerberos.ticket.renew.window.factor
sasl.login.callback.handler.class
sasl.login.class
sasl.login.connect.timeout.ms
sasl.login.read.timeout.ms
sasl.login.refresh.buffer.seconds
sasl.login.refresh.min.period.seconds
sasl.login.refresh.window.factor
sasl.login.refresh.window.jitter
sasl.login.retry.backoff.max.ms
sasl.login.retry.backoff.ms
sasl.mechanism.controller.protocol
sasl.mechanism.inter.broker.protocol
sasl.oauthbearer.assertion.algorithm
sasl.oauthbearer.assertion.claim.aud
sasl.oauthbearer.assertion.claim.exp.seconds
sasl.oauthbearer.assertion.claim.iss
sasl.oauthbearer.assertion.claim.jti.include
sasl.oauthbearer.assertion.claim.nbf.seconds
sasl.oauthbearer.assertion.claim.sub
sasl.oauthbearer.assertion.file
sasl.oauthbearer.assertion.private.key.file
sasl.oauthbearer.assertion.private.key.passphrase
sasl.oauthbearer.assertion.template.file
sasl.oauthbearer.client.credentials.client.id
sasl.oauthbearer.client.credentials.client.secret
sasl.oauthbearer.clock.skew.seconds
sasl.oauthbearer.expected.audience
sasl.oauthbearer.expected.issuer
sasl.oauthbearer.jwks.endpoint.refresh.ms
sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms
sasl.oauthbearer.jwks.endpoint.url
sasl.oauthbearer.jwt.retriever.class
sasl.oauthbearer.jwt.validator.class
sasl.oauthbearer.scope
sasl.oauthbearer.scope.claim.name
sasl.oauthbearer.sub.claim.name
sasl.oauthbearer.token.endpoint.url
sasl.server.callback.handler.class
sasl.server.max.receive.size
security.inter.broker.protocol
security.providers
server.max.startup.time.ms
share.coordinator.append.linger.ms
share.coordinator.load.buffer.size
share.coordinator.snapshot.update.records.per.snapshot
share.coordinator.state.topic.compression.codec
share.coordinator.state.topic.min.isr
share.coordinator.state.topic.num.partitions
share.coordinator.state.topic.replication.factor
share.coordinator.state.topic.segment.bytes
share.coordinator.threads
share.coordinator.write.timeout.ms
share.fetch.max.fetch.records
share.fetch.purgatory.purge.interval.requests
socket.connection.setup.timeout.max.ms
socket.connection.setup.timeout.ms
socket.listen.backlog.size
socket.receive.buffer.bytes
socket.request.max.bytes
socket.send.buffer.bytes
ssl.allow.dn.changes
ssl.allow.san.changes
ssl.cipher.suites
ssl.client.auth
ssl.enabled.protocols
ssl.endpoint.identification.algorithm
ssl.engine.factory.class
ssl.key.password
ssl.keymanager.algorithm
ssl.keystore.certificate.chain
ssl.keystore.key
ssl.keystore.location
ssl.keystore.password
ssl.keystore.type
ssl.principal.mapping.rules
ssl.protocol
ssl.provider
ssl.secure.random.implementation
ssl.trustmanager.algorithm
ssl.truststore.certificates
ssl.truststore.location
ssl.truststore.password
ssl.truststore.type
super.users
telemetry.max.bytes
transaction.abort.timed.out.transaction.cleanup.interval.ms
transaction.max.timeout.ms
transaction.partition.verification.enable
transaction.remove.expired.transaction.cleanup.interval.ms
transaction.state.log.load.buffer.size
transaction.state.log.min.isr
transaction.state.log.num.partitions
transaction.state.log.replication.factor
transaction.state.log.segment.bytes
transaction.two.phase.commit.enable
transactional.id.expiration.ms
unclean.leader.election.enable
unclean.leader.election.interval.ms
unstable.api.versions.enable
unstable.feature.versions.enable
zookeeper.clientCnxnSocket
zookeeper.connect
zookeeper.connection.timeout.ms
zookeeper.max.in.flight.requests
zookeeper.metadata.migration.enable
zookeeper.metadata.migration.min.batch.size
zookeeper.session.timeout.ms
zookeeper.set.acl
zookeeper.ssl.cipher.suites
zookeeper.ssl.client.enable
zookeeper.ssl.crl.enable
zookeeper.ssl.enabled.protocols
zookeeper.ssl.endpoint.identification.algorithm
zookeeper.ssl.keystore.location
zookeeper.ssl.keystore.password
zookeeper.ssl.keystore.type
zookeeper.ssl.ocsp.enable
zookeeper.ssl.protocol
zookeeper.ssl.truststore.location
zookeeper.ssl.truststore.password
zookeeper.ssl.truststore.type
"""

# Broker configs that Kafka defines outside KafkaConfig, as dynamic configs only
# (QuotaConfig.brokerQuotaConfigs, DynamicConfig.Broker): the replication throttles.
KAFKA_DYNAMIC_BROKER_CONFIGS = frozenset({
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
})

KAFKA_BROKER_CONFIGS: frozenset[str] = frozenset(_NAMES.split()) | KAFKA_DYNAMIC_BROKER_CONFIGS

_LISTENER_PREFIX = re.compile(r"listener\.name\.[^.\s]+\.")
_MECHANISM = re.compile(r"[a-z0-9-]+")


def split_listener_prefix(name: str) -> tuple[str, str] | None:
    """``(prefix, setting)`` for a name with Kafka's listener prefix, the setting being the part Kafka
    reads under it (``listener.name.internal.ssl.keystore.location`` ->
    ``("listener.name.internal.", "ssl.keystore.location")``; a SASL mechanism goes with the prefix);
    None for a name without the prefix."""
    match = _LISTENER_PREFIX.match(name)
    if match is None:
        return None
    prefix, rest = name[:match.end()], name[match.end():]
    mechanism, dot, setting = rest.partition(".")
    if rest not in KAFKA_BROKER_CONFIGS and dot and _MECHANISM.fullmatch(mechanism) \
            and setting in KAFKA_BROKER_CONFIGS:
        return prefix + mechanism + ".", setting
    return prefix, rest


def is_kafka_config(name: str) -> bool:
    """Whether Kafka's broker defines ``name``, as it is or with a listener prefix."""
    if name in KAFKA_BROKER_CONFIGS:
        return True
    split = split_listener_prefix(name)
    return split is not None and split[1] in KAFKA_BROKER_CONFIGS
