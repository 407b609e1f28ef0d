"""Spark's answers as plain JSON, in the forms DuckDB's node client prints (getRowObjectsJson), so the
SQL dialect's conformance test compares the two engines' values with one normalization.

Timestamps print in UTC (the session's zone) as `YYYY-MM-DD HH:MM:SS[.ffffff]`, decimals as text,
binaries as hex, maps as [{"key", "value"}] lists (DuckDB's), structs as objects in field order.
"""

import datetime
import decimal
import math

from pyspark.sql import Row


def plain(value):
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        else:
            # PySpark gives naive datetimes in the Python process's local zone.
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        if value.microsecond:
            text += ("." + f"{value.microsecond:06d}").rstrip("0")
        return text
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex().upper()
    if isinstance(value, datetime.timedelta):
        return {"days": value.days, "seconds": value.seconds, "micros": value.microseconds}
    if isinstance(value, Row):
        return {key: plain(item) for key, item in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return [{"key": plain(key), "value": plain(item)} for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return str(value)
