"""Rows as canonical text, shared by the interop readers: the suite sends the SQL (with `{t}` for
the relation) and runs the same SQL over Ebb's scan, so both sides format values identically."""

import duckdb


def connect():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def canonical(con, relation, select):
    """The rows of `relation` (an Arrow table) through `select`, as lists."""
    con.register("t", relation)
    try:
        return [list(row) for row in con.execute(select.replace("{t}", "t")).fetchall()]
    finally:
        con.unregister("t")
