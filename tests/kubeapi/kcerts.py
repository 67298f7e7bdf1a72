"""Certificates for the test server, made with the openssl command line: a CA
(generated, or the one given), the serving certificate, client certificates
(CN = user, O = groups) and the signing of CertificateSigningRequests."""

import os
import secrets
import subprocess
import tempfile
import threading
import time


class CertError(Exception):
    pass


def _run(args, stdin=None):
    p = subprocess.run(['openssl'] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise CertError('openssl %s: %s' % (args[0], p.stderr.decode(errors='replace').strip()))
    return p.stdout


def _subj(cn, orgs=()):
    def esc(s):
        return s.replace('\\', '\\\\').replace('/', '\\/').replace('+', '\\+').replace('=', '\\=')
    return ''.join('/O=' + esc(o) for o in orgs) + '/CN=' + esc(cn)


def _write_private(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'wb') as f:
        f.write(data)


class CA:
    def __init__(self, cert_path, key_path):
        self.cert_path = cert_path
        self.key_path = key_path
        self.lock = threading.Lock()
        with open(cert_path, 'rb') as f:
            self.cert_pem = f.read()

    @classmethod
    def generate(cls, directory, cn='kubeapi-test-ca'):
        cert = os.path.join(directory, 'ca.crt')
        key = os.path.join(directory, 'ca.key')
        _run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
              '-keyout', key, '-out', cert, '-days', '3650', '-subj', '/CN=' + cn,
              '-addext', 'basicConstraints=critical,CA:TRUE',
              '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'])
        os.chmod(key, 0o600)
        return cls(cert, key)

    def _sign(self, csr_pem, ext, days):
        now = int(time.time())
        return self._sign_window(csr_pem, ext, now, now + days * 86400)

    def issue(self, directory, name, cn, orgs=(), server=False, sans=()):
        """Writes name.crt / name.key into directory; returns the paths."""
        key = os.path.join(directory, name + '.key')
        crt = os.path.join(directory, name + '.crt')
        keypem = _run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1'])
        _write_private(key, keypem)
        csr = _run(['req', '-new', '-key', key, '-subj', _subj(cn, orgs)])
        ext = '[v3]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n'
        ext += 'extendedKeyUsage=%s\n' % ('serverAuth' if server else 'clientAuth')
        if sans:
            ext += 'subjectAltName=%s\n' % ','.join(sans)
        pem = self._sign(csr, ext, 825 if server else 365)
        with open(crt, 'wb') as f:
            f.write(pem)
        return crt, key

    def sign_csr(self, csr_pem, usages, expiration_seconds=None):
        """Signs a CertificateSigningRequest the way the kube-controller-manager
        signer does (usages become key usage / extended key usage)."""
        eku = []
        ku = []
        for u in usages:
            if u == 'client auth':
                eku.append('clientAuth')
            elif u == 'server auth':
                eku.append('serverAuth')
            elif u in ('digital signature', 'signing'):
                ku.append('digitalSignature')
            elif u == 'key encipherment':
                ku.append('keyEncipherment')
        ext = '[v3]\nbasicConstraints=critical,CA:FALSE\n'
        if ku:
            ext += 'keyUsage=critical,%s\n' % ','.join(sorted(set(ku)))
        if eku:
            ext += 'extendedKeyUsage=%s\n' % ','.join(eku)
        _run(['req', '-in', '/dev/stdin', '-noout', '-verify'], stdin=csr_pem)
        not_before, not_after = signing_window(time.time(), expiration_seconds)
        return self._sign_window(csr_pem, ext, not_before, not_after)

    def _sign_window(self, csr_pem, ext, not_before, not_after):
        """openssl ca: x509 -req takes whole days only."""
        def asn1(t):
            return time.strftime('%Y%m%d%H%M%SZ', time.gmtime(t))
        with tempfile.TemporaryDirectory() as td:
            csr = os.path.join(td, 'req.csr')
            extf = os.path.join(td, 'ext.cnf')
            cnf = os.path.join(td, 'ca.cnf')
            out = os.path.join(td, 'cert.pem')
            with open(csr, 'wb') as f:
                f.write(csr_pem)
            with open(extf, 'w') as f:
                f.write(ext)
            with open(os.path.join(td, 'index.txt'), 'w'):
                pass
            with open(cnf, 'w') as f:
                f.write('[ca]\ndefault_ca = signer\n[signer]\ndatabase = %s/index.txt\nnew_certs_dir = %s\n'
                        'default_md = sha256\npolicy = any\nunique_subject = no\nrand_serial = yes\n'
                        'email_in_dn = no\n[any]\norganizationName = optional\ncommonName = optional\n' % (td, td))
            with self.lock:
                _run(['ca', '-batch', '-config', cnf, '-cert', self.cert_path, '-keyfile', self.key_path,
                      '-in', csr, '-out', out, '-notext', '-preserveDN', '-startdate', asn1(not_before),
                      '-enddate', asn1(not_after), '-extfile', extf, '-extensions', 'v3'])
            with open(out, 'rb') as f:
                return f.read()


# kube-controller-manager's csrsigning (its PermissiveSigningPolicy, seen
# on the real 1.26: expirationSeconds 600 gave notBefore now-5m, notAfter
# now+10m; 86400 gave notBefore now-5m, notAfter notBefore+24h): a
# certificate is backdated 5 minutes; one shorter than 8 hours still
# lasts its whole duration from now. Without expirationSeconds the
# signer's --cluster-signing-duration (default one year).
SIGNING_BACKDATE = 5 * 60
SIGNING_SHORT = 8 * 3600
SIGNING_DURATION = 365 * 86400


def signing_window(now, expiration_seconds=None):
    ttl = int(expiration_seconds) if expiration_seconds else SIGNING_DURATION
    ttl = min(ttl, SIGNING_DURATION)
    not_before = int(now) - SIGNING_BACKDATE
    not_after = int(now) + ttl if ttl < SIGNING_SHORT else not_before + ttl
    return not_before, not_after


def make_csr(cn, orgs=()):
    """A PEM CSR and its key (for tests)."""
    key = _run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1'])
    with tempfile.TemporaryDirectory() as td:
        kp = os.path.join(td, 'k.pem')
        _write_private(kp, key)
        csr = _run(['req', '-new', '-key', kp, '-subj', _subj(cn, orgs)])
    return csr, key
