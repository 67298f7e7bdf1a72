"""Certificates for the test server, made with the openssl command line: a CA
(generated, or the one given), the serving certificate, client certificates
(CN = user, O = groups) and the signing of CertificateSigningRequests."""

import os
import secrets
import subprocess
import tempfile
import threading


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
        with tempfile.TemporaryDirectory() as td:
            csr = os.path.join(td, 'req.csr')
            extf = os.path.join(td, 'ext.cnf')
            with open(csr, 'wb') as f:
                f.write(csr_pem)
            with open(extf, 'w') as f:
                f.write(ext)
            with self.lock:
                return _run(['x509', '-req', '-in', csr, '-CA', self.cert_path, '-CAkey', self.key_path,
                             '-set_serial', '0x' + secrets.token_hex(16), '-days', str(days),
                             '-extfile', extf, '-extensions', 'v3'])

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
        days = 365
        if expiration_seconds:
            days = max(1, int(expiration_seconds) // 86400)
        _run(['req', '-in', '/dev/stdin', '-noout', '-verify'], stdin=csr_pem)
        return self._sign(csr_pem, ext, days)


def make_csr(cn, orgs=()):
    """A PEM CSR and its key (for tests)."""
    key = _run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1'])
    with tempfile.TemporaryDirectory() as td:
        kp = os.path.join(td, 'k.pem')
        _write_private(kp, key)
        csr = _run(['req', '-new', '-key', kp, '-subj', _subj(cn, orgs)])
    return csr, key
