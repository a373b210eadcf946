"""Probing the shards: the compiled prober (:mod:`.engine`) and its slow twin (:mod:`.reference`)."""
