"""TLS and caching_sha2_password: the self-signed certificate generated into
the datadir (and reused), `mariadb --ssl` and PyMySQL over TLS,
--require-secure-transport (3159 for plain text), --ssl-cert/--ssl-key, and
caching_sha2_password logins: full authentication over TLS (cleartext) and
over plain text (RSA key exchange), then the fast path from the cache."""

import os
import subprocess

import pymysql
import pymysql._auth
import pytest

from lockstep_server import HOST, TARGET, code_of

pytestmark = pytest.mark.skipif(TARGET != "lockstep", reason="lockstep TLS settings")

TLS = {"ssl": {"check_hostname": False}}


def status(conn, name):
    with conn.cursor() as c:
        c.execute(f"SHOW STATUS LIKE '{name}'")
        rows = c.fetchall()
    return rows[0][1] if rows else None


def cli(server, sql, user="root", password="", args=()):
    cmd = ["mariadb", "--no-defaults", f"-h{HOST}", f"-P{server.port}", f"-u{user}",
           "--protocol=TCP", "--connect-timeout=10", "--batch", "--skip-column-names", *args]
    if password:
        cmd.append(f"-p{password}")
    return subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=60)


def test_generated_certificate_and_tls_clients(server_factory):
    s = server_factory("tls")
    cert = os.path.join(s.datadir, "server-cert.pem")
    key = os.path.join(s.datadir, "server-key.pem")
    assert open(cert).read().startswith("-----BEGIN CERTIFICATE-----")
    assert os.stat(key).st_mode & 0o077 == 0, "key readable by the owner only"
    first = open(cert).read()

    r = cli(s, "SHOW STATUS LIKE 'Ssl_cipher'; SHOW STATUS LIKE 'Ssl_version';",
            args=["--ssl"])
    assert r.returncode == 0, r.stderr
    lines = dict(line.split("\t") for line in r.stdout.splitlines())
    assert lines["Ssl_cipher"].strip() and lines["Ssl_version"].startswith("TLSv1.")

    conn = s.connect(**TLS)
    assert status(conn, "Ssl_cipher")
    conn.close()
    plain = s.connect(ssl_disabled=True)
    assert status(plain, "Ssl_cipher") == ""
    plain.close()

    # The pair is reused on later starts.
    s.restart()
    assert open(cert).read() == first


def test_require_secure_transport(server_factory):
    s = server_factory("secure", extra_args=["--require-secure-transport"], connect_kw=TLS)
    assert code_of(lambda: s.connect(ssl=None, ssl_disabled=True)) == 3159
    r = cli(s, "SELECT 1;", args=["--skip-ssl"])
    assert r.returncode != 0 and "ERROR 3159 (HY000)" in r.stderr, r.stderr
    r = cli(s, "SHOW STATUS LIKE 'Ssl_version';", args=["--ssl"])
    assert r.returncode == 0 and "TLSv1." in r.stdout, r.stderr
    conn = s.connect()
    assert status(conn, "Ssl_cipher")
    conn.close()


def test_given_certificate(server_factory, tmp_path):
    donor = server_factory("donor")
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_bytes(open(os.path.join(donor.datadir, "server-cert.pem"), "rb").read())
    key.write_bytes(open(os.path.join(donor.datadir, "server-key.pem"), "rb").read())
    s = server_factory("given", extra_args=[f"--ssl-cert={cert}", f"--ssl-key={key}"])
    assert not os.path.exists(os.path.join(s.datadir, "server-cert.pem"))
    conn = s.connect(**TLS)
    assert status(conn, "Ssl_version").startswith("TLSv1.")
    conn.close()


def test_require_ssl_per_user(server_factory):
    s = server_factory("requiressl")
    s.sql("CREATE USER careful IDENTIFIED WITH mysql_native_password BY 'c' REQUIRE SSL")
    assert code_of(lambda: s.connect(user="careful", password="c", ssl_disabled=True)) == 1045
    s.connect(user="careful", password="c", **TLS).close()
    s.restart(crash=True)
    assert code_of(lambda: s.connect(user="careful", password="c", ssl_disabled=True)) == 1045
    s.sql("ALTER USER careful REQUIRE NONE")
    s.connect(user="careful", password="c", ssl_disabled=True).close()


def no_rsa(*_a, **_kw):
    raise AssertionError("RSA exchange used where the fast path was expected")


def test_caching_sha2_password(server_factory, monkeypatch):
    s = server_factory("sha2")
    s.sql("CREATE DATABASE app")
    s.sql("CREATE USER tls_user IDENTIFIED WITH caching_sha2_password BY 'T0ps3cret'")
    s.sql("CREATE USER rsa_user IDENTIFIED BY 'rsa-pw'")  # the default plugin
    s.sql("CREATE USER empty_user IDENTIFIED WITH caching_sha2_password")
    s.sql("GRANT SELECT ON app.* TO tls_user, rsa_user")
    grants = [r[0] for r in s.sql("SHOW GRANTS FOR rsa_user")]
    assert grants[1] == "GRANT SELECT ON `app`.* TO `rsa_user`@`%`"

    # Full authentication over TLS: the password in clear inside TLS.
    c = s.connect(db="app", user="tls_user", password="T0ps3cret", **TLS)
    assert c.get_server_info().startswith("8.0")
    c.close()
    # Full authentication over plain text: RSA public key exchange.
    c = s.connect(db="app", user="rsa_user", password="rsa-pw", ssl_disabled=True)
    c.close()
    assert os.path.exists(os.path.join(s.datadir, "public_key.pem"))
    # Now both are cached: the fast path needs no RSA.
    monkeypatch.setattr(pymysql._auth, "sha2_rsa_encrypt", no_rsa)
    for user, pw in (("tls_user", "T0ps3cret"), ("rsa_user", "rsa-pw")):
        c = s.connect(db="app", user=user, password=pw, ssl_disabled=True)
        c.close()
        assert code_of(lambda: s.connect(user=user, password=pw + "x", ssl_disabled=True)) == 1045
    s.connect(user="empty_user", password="", ssl_disabled=True).close()
    monkeypatch.undo()

    # A changed password drops the cached digest; a restart empties the cache.
    s.sql("ALTER USER rsa_user IDENTIFIED BY 'new-pw'")
    assert code_of(lambda: s.connect(user="rsa_user", password="rsa-pw", ssl_disabled=True)) == 1045
    s.connect(user="rsa_user", password="new-pw", ssl_disabled=True).close()
    s.restart()
    assert code_of(lambda: s.connect(user="rsa_user", password="bad", **TLS)) == 1045
    s.connect(user="rsa_user", password="new-pw", ssl_disabled=True).close()

    # The mariadb client with its caching_sha2_password plugin, both ways.
    for args in (["--ssl"], ["--skip-ssl"]):
        r = cli(s, "SELECT CURRENT_USER();", user="tls_user", password="T0ps3cret", args=args)
        assert r.returncode == 0 and r.stdout.startswith("tls_user@"), r.stderr
    r = cli(s, "SELECT 1;", user="tls_user", password="wrong", args=["--ssl"])
    assert "ERROR 1045 (28000)" in r.stderr, r.stderr

    # Native accounts beside them: no switch, no full authentication.
    s.sql("CREATE USER native_user IDENTIFIED WITH mysql_native_password BY 'n'")
    s.connect(user="native_user", password="n", ssl_disabled=True).close()
