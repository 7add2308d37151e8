"""Fault injection on the client listeners (error stacks, added round-trip time, capture, older
advertised versions) and the JSON operations that set them."""
