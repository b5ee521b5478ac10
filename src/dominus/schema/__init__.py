"""The schema of record: every table DOMINUS keeps (the job engine's and the domain's), its
migrations, and copying a database from one backend to another. Above the engine: `dominus.jobs`
owns its own tables' definitions, and this package composes them with the domain's."""
