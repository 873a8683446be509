use super::*;

#[test]
fn smoke() {
    for sql in [
        "SELECT c FROM sbtest1 WHERE id=?",
        "CREATE TABLE sbtest1(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */",
        "SELECT @@version_comment LIMIT 1",
    ] {
        println!("{sql}\n{:#?}", parse(sql));
    }
}
