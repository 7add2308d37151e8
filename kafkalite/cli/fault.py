"""``kafkalite fault``: a running cluster's faults, through its fault endpoint
(kafkalite/local/fault_admin.py)."""

from __future__ import annotations

import click

from kafkalite.common.cli_help import Group


@click.group(cls=Group)
@click.option("--admin", envvar="KAFKALITE_FAULT_ADMIN", required=True, metavar="HOST:PORT",
              help="The cluster's fault endpoint, as `kafkalite cluster` prints it (or "
                   "kafkalite.testing's Cluster.serve_admin); env KAFKALITE_FAULT_ADMIN.")
@click.pass_context
def fault(ctx: click.Context, admin: str) -> None:
    """Inject faults into a running cluster (errors, latency, brokers down, capture, old versions)."""
    host, _, port = admin.rpartition(":")
    if not host or not port.isdigit():
        raise click.BadParameter(f"{admin!r} is not HOST:PORT", param_hint="--admin")
    ctx.obj = (host, int(port))


def _fault_call(ctx: click.Context, args: dict) -> None:
    import json

    from kafkalite.local.fault_client import FaultCallError, post_json

    host, port = ctx.obj
    try:
        result = post_json(host, port, {k: v for k, v in args.items() if v is not None})
    except FaultCallError as e:
        raise click.ClickException(str(e)) from None
    # An operation that answers nothing (per broker: null) prints nothing.
    if result is not None and not (isinstance(result, dict) and all(v is None for v in result.values())):
        click.echo(json.dumps(result, indent=2))


_broker_option = click.option("--broker", type=int, default=None,
                              help="One broker (node id); every running broker without it.")


@fault.command("brokers")
@click.pass_context
def fault_brokers(ctx: click.Context) -> None:
    """The cluster's brokers and whether each runs."""
    _fault_call(ctx, {"op": "brokers"})


@fault.command("errors")
@click.argument("api")
@click.argument("errors", nargs=-1, required=True)
@click.option("--count", default=1, show_default=True, type=click.IntRange(1), help="Repeat the errors.")
@_broker_option
@click.option("--topic", default=None, help="Only this partition's answers (with --partition).")
@click.option("--partition", type=int, default=None)
@click.pass_context
def fault_errors(ctx: click.Context, api: str, errors: tuple[str, ...], count: int, broker: int | None,
                 topic: str | None, partition: int | None) -> None:
    """Answer the next API requests with ERRORS, in order (names or codes): `errors Produce
    NOT_LEADER_OR_FOLLOWER --count 3`."""
    _fault_call(ctx, {"op": "push_errors", "api": api, "errors": list(errors), "count": count,
                      "broker": broker, "topic": topic, "partition": partition})


@fault.command("pending")
@_broker_option
@click.pass_context
def fault_pending(ctx: click.Context, broker: int | None) -> None:
    """The injected errors not answered yet."""
    _fault_call(ctx, {"op": "pending_errors", "broker": broker})


@fault.command("clear")
@_broker_option
@click.pass_context
def fault_clear(ctx: click.Context, broker: int | None) -> None:
    """Every fault off: errors, added latency, capture, versions."""
    _fault_call(ctx, {"op": "clear", "broker": broker})


@fault.command("rtt")
@click.argument("ms", type=click.IntRange(0))
@_broker_option
@click.pass_context
def fault_rtt(ctx: click.Context, ms: int, broker: int | None) -> None:
    """Add MS milliseconds to every response (0: none)."""
    _fault_call(ctx, {"op": "rtt", "ms": ms, "broker": broker})


@fault.command("drop")
@_broker_option
@click.pass_context
def fault_drop(ctx: click.Context, broker: int | None) -> None:
    """Close the clients' connections now."""
    _fault_call(ctx, {"op": "drop_connections", "broker": broker})


@fault.command("down")
@click.argument("broker", type=int)
@click.pass_context
def fault_down(ctx: click.Context, broker: int) -> None:
    """Close BROKER's client listeners (no leadership change); `up` reopens them."""
    _fault_call(ctx, {"op": "down", "broker": broker})


@fault.command("up")
@click.argument("broker", type=int)
@click.pass_context
def fault_up(ctx: click.Context, broker: int) -> None:
    """Reopen BROKER's client listeners."""
    _fault_call(ctx, {"op": "up", "broker": broker})


@fault.command("kill")
@click.argument("broker", type=int)
@click.pass_context
def fault_kill(ctx: click.Context, broker: int) -> None:
    """Kill BROKER (the active controller too: in a quorum another voter takes over): its
    leaderships move at once; `restart` starts it."""
    _fault_call(ctx, {"op": "kill", "broker": broker})


@fault.command("partition")
@click.argument("voter", type=int)
@click.pass_context
def fault_partition(ctx: click.Context, voter: int) -> None:
    """Cut VOTER's controller off from every other node (a cluster run with --controllers)."""
    _fault_call(ctx, {"op": "partition", "broker": voter})


@fault.command("heal")
@click.argument("voter", type=int)
@click.pass_context
def fault_heal(ctx: click.Context, voter: int) -> None:
    """Undo `partition` for VOTER."""
    _fault_call(ctx, {"op": "heal", "broker": voter})


@fault.command("restart")
@click.argument("broker", type=int)
@click.pass_context
def fault_restart(ctx: click.Context, broker: int) -> None:
    """Start a killed BROKER again and wait until it is registered."""
    _fault_call(ctx, {"op": "restart", "broker": broker})


@fault.command("capture")
@click.argument("action", type=click.Choice(["start", "show", "stop"]))
@_broker_option
@click.pass_context
def fault_capture(ctx: click.Context, action: str, broker: int | None) -> None:
    """Record the requests clients send (start), print them (show), print and stop (stop)."""
    op = {"start": "capture_start", "show": "capture_get", "stop": "capture_stop"}[action]
    _fault_call(ctx, {"op": op, "broker": broker})


@fault.command("max-versions")
@click.argument("limits", nargs=-1, metavar="API=VERSION...")
@_broker_option
@click.pass_context
def fault_max_versions(ctx: click.Context, limits: tuple[str, ...], broker: int | None) -> None:
    """Advertise at most these versions in ApiVersions (`Produce=7 Fetch=11`); none: the real ones."""
    versions = {}
    for item in limits:
        name, _, version = item.partition("=")
        if not version.isdigit():
            raise click.BadParameter(f"{item!r} is not API=VERSION", param_hint="LIMITS")
        versions[name] = int(version)
    _fault_call(ctx, {"op": "max_versions", "versions": versions, "broker": broker})
