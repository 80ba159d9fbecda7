"""The full-text GIN index of message bodies, on PostgreSQL only (the embedded SQLite run
has no text search; search.py falls back there)."""

from django.db import migrations

# The expression exactly as Django renders SearchVector("body", config="english"), so
# the planner uses the index for search.py's queries.
SEARCH_INDEX_SQL = (
    'CREATE INDEX IF NOT EXISTS "team_chat_msg_search" ON "team_chat_chatmessage" '
    "USING gin (to_tsvector('english'::regconfig, COALESCE(\"body\", '')))")


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SEARCH_INDEX_SQL)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute('DROP INDEX IF EXISTS "team_chat_msg_search"')


class Migration(migrations.Migration):
    dependencies = [("team_chat", "0001_initial")]

    operations = [migrations.RunPython(create_index, drop_index)]
