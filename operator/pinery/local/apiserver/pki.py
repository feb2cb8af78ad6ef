"""TLS for the local control plane: a CA and a serving certificate under the state directory.

kubectl (client-go) sends credentials only over TLS, so a server with a bearer token must
serve HTTPS. The CA is made once per state directory and kept, so a kubeconfig written before
a restart stays valid; the serving certificate names 127.0.0.1, ::1, localhost and the host the
server listens on. EC P-256 keys keep start-up fast.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

_VALID_DAYS = 3650


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    server_cert: Path
    server_key: Path

    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.server_cert, self.server_key)
        return context

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    path.chmod(0o600)


def _names(host: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(ipaddress.ip_address("::1"))]
    try:
        address = ipaddress.ip_address(host)
        if x509.IPAddress(address) not in names:
            names.append(x509.IPAddress(address))
    except ValueError:
        if host and x509.DNSName(host) not in names:
            names.append(x509.DNSName(host))
    return names


def _certificate(subject: str, public_key, issuer: x509.Name | None, signing_key, *, ca: bool, names: Sequence[x509.GeneralName] = ()) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=_VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                          key_encipherment=False, data_encipherment=False, key_agreement=False,
                          encipher_only=False, decipher_only=False),
            critical=True,
        )
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def ensure_pki(folder: Path, host: str) -> Pki:
    """The CA (made once) and a serving certificate for `host` under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_cert_path, ca_key_path = folder / "ca.crt", folder / "ca.key"
    if ca_cert_path.exists() and ca_key_path.exists():
        ca_cert = x509.load_pem_x509_certificate(ca_cert_path.read_bytes())
        ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_cert = _certificate("pinery-local-ca", ca_key.public_key(), None, ca_key, ca=True)
        _write_key(ca_key_path, ca_key)
        ca_cert_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    server_cert_path, server_key_path = folder / "server.crt", folder / "server.key"
    names = _names(host)
    if server_cert_path.exists() and server_key_path.exists():
        existing = x509.load_pem_x509_certificate(server_cert_path.read_bytes())
        try:
            sans = existing.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            if all(n in sans for n in names) and existing.issuer == ca_cert.subject:
                return Pki(ca_cert_path, server_cert_path, server_key_path)
        except x509.ExtensionNotFound:
            pass
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate("pinery-local-apiserver", key.public_key(), ca_cert.subject, ca_key, ca=False, names=names)
    _write_key(server_key_path, key)
    server_cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return Pki(ca_cert_path, server_cert_path, server_key_path)
