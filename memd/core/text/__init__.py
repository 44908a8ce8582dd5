"""Language tools any feature may use: stemming and byte-bounded memo caches.

Rule: depends on nothing in memd.
"""
