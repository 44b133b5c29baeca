"""What an operator does to a whole installation: back it up, restore it, move it from SQLite
to PostgreSQL (`flask --app svc backup|restore|copy-to`, docs/operations.md).

Every database copy goes through a SQLite file: a backup's database is one (SQLite's online
backup of a SQLite installation; a copy made in one snapshot transaction of a PostgreSQL one),
a restore reads one, and copy-to first snapshots the installation into one, so that the
service can keep running while the copy is read."""
