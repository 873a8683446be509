NAME = "connector_j"
VERSION = "?"
QUICK = False
