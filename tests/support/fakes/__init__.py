"""Fake network services on loopback ports, shared by the provider and end-to-end suites."""
