//! HTTPS for the MCP reference server (`--tls`): a certificate authority and a
//! server certificate for `localhost` and `127.0.0.1`, made at start-up with
//! rcgen and never written to disk. A client trusts the server by trusting
//! [`TestCertificate::ca_der`] for that run only.
//!
//! The faults of MCP-SEC-002 are certificates a client must refuse: expired,
//! for another host name, or self-signed instead of chained to the CA.

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::sync::Arc;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// What is wrong with the server certificate, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CertificateFault {
    #[default]
    None,
    /// Valid from 2020-01-01 to 2021-01-01.
    Expired,
    /// Issued for `wrong-host.protocheck.invalid` only.
    WrongHost,
    /// Signed by its own key, not by the CA the client trusts.
    SelfSigned,
}

/// A CA and a server certificate signed by it (or not, per the fault).
#[derive(Clone)]
pub struct TestCertificate {
    /// The CA certificate (DER) a test client adds to its trusted roots.
    pub ca_der: Vec<u8>,
    /// The same certificate as PEM, for `check --ca-cert` (`--ca-out`).
    pub ca_pem: String,
    pub(super) server: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for TestCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCertificate").finish_non_exhaustive()
    }
}

impl TestCertificate {
    /// Makes a CA and a server certificate with `fault`.
    pub fn generate(fault: CertificateFault) -> Result<Self, String> {
        let err = |e: rcgen::Error| format!("cannot make the test certificate: {e}");
        let ca_key = KeyPair::generate().map_err(err)?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "protocheck reference test CA");
        let ca = ca_params.self_signed(&ca_key).map_err(err)?;

        let names = match fault {
            CertificateFault::WrongHost => vec!["wrong-host.protocheck.invalid".to_owned()],
            _ => vec!["localhost".to_owned(), "127.0.0.1".to_owned()],
        };
        let mut params = CertificateParams::new(names).map_err(err)?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "protocheck reference MCP server");
        if fault == CertificateFault::Expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let key = KeyPair::generate().map_err(err)?;
        let leaf = match fault {
            CertificateFault::SelfSigned => params.self_signed(&key).map_err(err)?,
            _ => params.signed_by(&key, &ca, &ca_key).map_err(err)?,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot configure TLS: {e}"))?
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(leaf.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .map_err(|e| format!("cannot configure TLS: {e}"))?;
        Ok(Self {
            ca_der: ca.der().to_vec(),
            ca_pem: ca.pem(),
            server: Arc::new(server),
        })
    }
}
