"""pinery's own JSON-schema markers, set by the API models and read by the CRD converter."""

from __future__ import annotations

# JSON-schema marker for fields that cannot change after creation.
#   "value":    the field may not be added, removed or changed;
#   "presence": the field may not be added or removed, but its own fields follow their markers.
IMMUTABLE = "x-pinery-immutable"
