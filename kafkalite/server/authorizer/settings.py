"""The authorizer's settings as rows of the broker's settings table (``AUTHORIZER_SETTINGS``,
joined in server/config.py) and their typed view.

``authorizer.class.name`` empty (Kafka's default) means no authorizer: every request is allowed
and the ACL apis answer SECURITY_DISABLED. Kafka's two class names both select the
StandardAuthorizer (authorizer/standard.py). ``super.users`` and ``allow.everyone.if.no.acl.found``
are the properties Kafka's authorizer reads from the broker's configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, fields_from, one_of

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ACL_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"  # ZooKeeper-era name, same rules here

AUTHORIZER_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "authorizer.class.name", "string", "",
        "The fully qualified name of the authorizer, which decides whether each request's principal "
        f"may do what it asks. Empty: none, everything is allowed. {STANDARD_AUTHORIZER} (or "
        f"{ACL_AUTHORIZER}, taken as the same): the ACLs the controller stores (CreateAcls), "
        "super.users and allow.everyone.if.no.acl.found.",
        validator=one_of("", STANDARD_AUTHORIZER, ACL_AUTHORIZER), group="security",
    ),
    Setting(
        "super.users", "string", "",
        "Principals allowed everything whatever the ACLs say, separated by semicolons "
        "(User:admin;User:ops). Read by Kafka's authorizer from the broker's configuration.",
        group="security",
    ),
    Setting(
        "allow.everyone.if.no.acl.found", "bool", False,
        "Whether a resource without any ACL (of any principal) is open to everyone; false: only "
        "super users may use it. Read by Kafka's authorizer from the broker's configuration.",
        group="security",
    ),
)

_field = fields_from(AUTHORIZER_SETTINGS)


def _super_users(text: str) -> frozenset[str]:
    return frozenset(p.strip() for p in (text or "").split(";") if p.strip())


@dataclass(frozen=True)
class AuthorizerSettings:
    class_name: str = _field("authorizer.class.name")
    super_users: frozenset[str] = _field("super.users", _super_users)
    allow_everyone_if_no_acl_found: bool = _field("allow.everyone.if.no.acl.found")

    @property
    def enabled(self) -> bool:
        return bool(self.class_name)
