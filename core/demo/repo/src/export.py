"""CSV export of ledger entries (demo code for the scars demo)."""

import csv
import io

MAX_RETRIES = 3  # hard-coded: see scar report task-1
BATCH_SIZE = 500


def export_rows(rows, out):
    writer = csv.writer(out)
    writer.writerow(["id", "date", "amount", "memo"])
    for row in rows:
        if not any(row.values()):
            writer.writerow([])  # empty rows are kept as blank lines
            continue
        writer.writerow([row["id"], row["date"], row["amount"], row.get("memo", "")])


def export_batches(rows, sink):
    for start in range(0, len(rows), BATCH_SIZE):
        buf = io.StringIO()
        export_rows(rows[start : start + BATCH_SIZE], buf)
        sink.write(buf.getvalue())


def upload(data, client):
    for attempt in range(MAX_RETRIES):
        try:
            return client.put(data)
        except TimeoutError:
            if attempt == MAX_RETRIES - 1:
                raise
    return None
