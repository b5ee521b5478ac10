"""The web dashboard (ADR 0023): server-rendered pages on the API's app, for reading without
JavaScript, with htmx (vendored under static/) for live parts and in-place actions.
`dominus.web.install.install_dashboard` adds it to an app."""
