NAME = "rust_mysql"
VERSION = "?"
QUICK = False
