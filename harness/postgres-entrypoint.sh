#!/bin/sh
# PostgreSQL started as the official image starts it, for the test of compose.yaml
# (harness/container.py's postgresql_image): a new data folder gets the superuser
# POSTGRES_USER with the password POSTGRES_PASSWORD and the database POSTGRES_DB, in UTF-8 as
# there (initdb's default here would be SQL_ASCII, whose text psycopg returns as bytes).
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/password
    initdb --username="$POSTGRES_USER" --pwfile=/tmp/password --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 --pgdata="$PGDATA" > /dev/null
    rm /tmp/password
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses='' -c unix_socket_directories=/tmp" \
        --wait --silent start
    createdb --username="$POSTGRES_USER" "$POSTGRES_DB"
    pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
