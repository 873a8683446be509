NAME = "node_mysql2"
VERSION = "?"
QUICK = False
