"""What more than one process runs: the protocol, values and graphs on the wire, the tamper watch, time spans,
tiers, the draw."""
