"""information_schema.KEYWORDS reads the parser's own keyword table: every
word it lists as reserved is refused as an unquoted table name (1064), and
non-reserved keywords are accepted (issue 41)."""

import random

from lockstep_server import code_of


def keywords(cur, reserved):
    cur.execute("SELECT WORD FROM information_schema.KEYWORDS WHERE RESERVED = %s "
                "ORDER BY WORD", (reserved,))
    return [w for (w,) in cur.fetchall()]


def test_reserved_flags_as_in_mysql_8(cur):
    cur.execute("SELECT WORD, RESERVED FROM information_schema.KEYWORDS "
                "WHERE WORD IN ('SELECT', 'GROUP', 'ACCOUNT', 'ZONE') ORDER BY WORD")
    assert cur.fetchall() == (("ACCOUNT", 0), ("GROUP", 1), ("SELECT", 1), ("ZONE", 0))
    cur.execute("SELECT COUNT(*), SUM(RESERVED) FROM information_schema.KEYWORDS")
    total, reserved = cur.fetchone()
    assert (total, reserved) == (750, 262)


def test_every_reserved_word_is_refused_as_a_table_name(cur):
    for word in keywords(cur, 1):
        assert code_of(lambda: cur.execute(f"CREATE TABLE {word} (a INT)")) == 1064, word
        # Quoted, it is a name like any other.
        cur.execute(f"CREATE TABLE `{word}` (a INT)")
        cur.execute(f"DROP TABLE `{word}`")


def test_non_reserved_words_are_accepted(cur):
    words = keywords(cur, 0)
    sample = ["ACCOUNT", "ZONE", "BEGIN", "END", "STATUS", "DATA"]
    sample += random.Random(41).sample(words, 40)
    for word in sample:
        cur.execute(f"CREATE TABLE {word} (a INT)")
        cur.execute(f"INSERT INTO {word} VALUES (1)")
        cur.execute(f"SELECT a FROM {word}")
        assert cur.fetchall() == ((1,),), word
        cur.execute(f"DROP TABLE {word}")
