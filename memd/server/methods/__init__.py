"""The protocol's methods: the method table and its thin handlers (`handlers`: parse, call,
convert), what a read asks for (`read_filters`), and one search that `query` and `context`
share (`search`: gather, rank, fuse, boost)."""
