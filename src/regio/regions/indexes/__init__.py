"""The window's indexes over its entries: lookups in O(1) instead of scans of the conversation.

Modules:

* :mod:`~regio.regions.indexes.calls` — call id -> the group and the ``tool_use`` block of the
  call (:class:`~regio.regions.indexes.calls.CallIndex`, one record per call);
* :mod:`~regio.regions.indexes.results` — call id -> the entries holding its live result
  (:class:`~regio.regions.indexes.results.ResultIndex`, one per conversation region).

The :class:`regio.regions.Window` keeps them current as entries are written and removed;
each is rebuilt from the entries on first use after a load.
"""
