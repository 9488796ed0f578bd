"""The HTTP edge of `harness serve --http`: Host/Origin checks, authentication, and request-body handling.

Only the front door (mcp_server, cli) imports this package; nothing below surface does.
"""
