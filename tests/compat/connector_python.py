NAME = "connector_python"
VERSION = "?"
QUICK = False
