//! HTTP agents for everything fcorr calls over the network (the GitHub API, HTTP systems under
//! test), built in one place so that company networks work everywhere: the proxy comes from
//! `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`/`NO_PROXY` (either case), and TLS trusts the system
//! certificate store (or `SSL_CERT_FILE`/`SSL_CERT_DIR`) in addition to the bundled Mozilla roots.
//! Whether redirects are followed is the caller's choice ([`Redirects`]), never a default.

use std::sync::{Arc, OnceLock};

use ureq::config::ConfigBuilder;
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::typestate::AgentScope;

/// Whether an agent follows redirects: each caller says, because a redirect may point anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Redirects {
    /// Follow them, dropping `Authorization` on every hop; for a client whose other headers are
    /// no secret (the GitHub API: artifact downloads end on blob storage).
    Follow,
    /// Never: the 3xx answer comes back to the caller. For clients sending configured headers
    /// (systems under test), which must never reach another origin.
    Never,
}

/// An agent configuration with fcorr's proxy and TLS settings and the caller's redirect rule;
/// callers add timeouts and the like.
pub(crate) fn agent_config(redirects: Redirects) -> ConfigBuilder<AgentScope> {
    let builder = ureq::Agent::config_builder()
        // ureq's own reading of the variables (it also honours NO_PROXY); read per agent so a
        // test or a wrapper script that sets them before the call is obeyed.
        .proxy(ureq::Proxy::try_from_env())
        .tls_config(TlsConfig::builder().root_certs(root_certs()).build())
        .user_agent(concat!("fcorr/", env!("CARGO_PKG_VERSION")));
    match redirects {
        // ureq keeps every other header on a redirect, whatever the new host.
        Redirects::Follow => builder.redirect_auth_headers(ureq::config::RedirectAuthHeaders::Never),
        Redirects::Never => builder.max_redirects(0),
    }
}

/// The bundled Mozilla roots plus the platform's (loaded once per process: reading the system
/// store parses a few hundred kilobytes).
fn root_certs() -> RootCerts {
    static ROOTS: OnceLock<Arc<Vec<Certificate<'static>>>> = OnceLock::new();
    let certs = ROOTS.get_or_init(|| {
        let mut certs: Vec<Certificate<'static>> =
            webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().map(|der| Certificate::from_der(der).to_owned()).collect();
        certs.extend(system_certs());
        Arc::new(certs)
    });
    RootCerts::Specific(Arc::clone(certs))
}

/// The system store, or the files `SSL_CERT_FILE`/`SSL_CERT_DIR` name (OpenSSL's convention,
/// through rustls-native-certs). Unreadable files are a warning: the bundled roots still work
/// for github.com, and a TLS error will name the host if a private CA was needed.
fn system_certs() -> Vec<Certificate<'static>> {
    let found = rustls_native_certs::load_native_certs();
    for error in &found.errors {
        errln!("fcorr: warning: system certificates: {error}");
    }
    found.certs.iter().map(|der| Certificate::from_der(der.as_ref()).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_include_the_bundled_ones() {
        let RootCerts::Specific(certs) = root_certs() else { panic!("fcorr always lists its roots") };
        assert!(certs.len() >= webpki_root_certs::TLS_SERVER_ROOT_CERTS.len());
    }
}
