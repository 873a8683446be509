NAME = "connector_python_compress"
VERSION = "?"
QUICK = False
