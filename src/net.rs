//! Network settings for everything fcorr calls over the network (the GitHub API, HTTP systems
//! under test), decided in one place so that company networks work everywhere: the proxy comes
//! from `ALL_PROXY`/`HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` (either case), and TLS trusts the system
//! certificate store (or `SSL_CERT_FILE`/`SSL_CERT_DIR`) in addition to the bundled Mozilla roots.
//! Systems under test get a blocking ureq agent from here; the GitHub client's hyper connector
//! (`github::transport`) takes the same proxy choice and roots. Whether redirects are followed
//! is the caller's choice ([`Redirects`]) on either client, never a default.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use ureq::config::ConfigBuilder;
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::typestate::AgentScope;

/// The value fcorr sends as `User-Agent`.
pub(crate) const USER_AGENT: &str = concat!("fcorr/", env!("CARGO_PKG_VERSION"));

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
        .user_agent(USER_AGENT);
    match redirects {
        // ureq keeps every other header on a redirect, whatever the new host.
        Redirects::Follow => builder.redirect_auth_headers(ureq::config::RedirectAuthHeaders::Never),
        Redirects::Never => builder.max_redirects(0),
    }
}

/// Proxy variables in the order they are looked at. The first one set is the proxy for every
/// URL, http and https alike (ureq's reading, which the SUT agents get): a company proxy is
/// usually given only as `HTTPS_PROXY`, and a GitHub Enterprise API on plain http must not go
/// around it.
const PROXY_VARS: [&str; 6] = ["ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

/// The proxy the environment names, read at each call (like the agents' settings) so a wrapper
/// script that sets the variables first is obeyed.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ProxySetting {
    /// The variable it came from, for messages.
    pub(crate) variable: &'static str,
    /// Its value (it may hold a password: never print it, see [`ProxySetting::shown`]).
    pub(crate) url: String,
    /// `NO_PROXY` (or `no_proxy`): hosts, domain suffixes, IPs and networks reached directly,
    /// `*.suffix` already written `.suffix` (see [`ProxySetting::no_proxy_list`]).
    pub(crate) no_proxy: String,
}

impl ProxySetting {
    /// The first proxy variable that is set and not empty, with `NO_PROXY`.
    pub(crate) fn from_env() -> Option<ProxySetting> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Option<ProxySetting> {
        let (variable, url) = PROXY_VARS
            .iter()
            .find_map(|name| var(name).filter(|v| !v.trim().is_empty()).map(|v| (*name, v.trim().to_string())))?;
        let no_proxy = var("NO_PROXY").or_else(|| var("no_proxy")).unwrap_or_default();
        Some(ProxySetting { variable, url, no_proxy: Self::no_proxy_list(&no_proxy) })
    }

    /// `NO_PROXY` in curl's syntax (what hyper's matcher reads: a name matches itself and its
    /// subdomains, `.suffix` the same, IPs, CIDR networks, `*`), with ureq's `*.suffix` kept
    /// working as `.suffix`.
    fn no_proxy_list(raw: &str) -> String {
        let entries = raw.split(',').map(str::trim).filter(|e| !e.is_empty());
        let entries: Vec<&str> = entries.map(|e| if e.starts_with("*.") { &e[1..] } else { e }).collect();
        entries.join(",")
    }

    /// `VARIABLE (scheme://host:port)`, without any user name or password in the URL.
    pub(crate) fn shown(&self) -> String {
        let rest = self.url.split_once("://").map_or(self.url.as_str(), |(_, rest)| rest);
        let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        let host = host.split('/').next().unwrap_or_default();
        match self.url.split_once("://") {
            Some((scheme, _)) => format!("{} ({scheme}://{host})", self.variable),
            None => format!("{} ({host})", self.variable),
        }
    }
}

impl std::fmt::Debug for ProxySetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxySetting").field("proxy", &self.shown()).field("no_proxy", &self.no_proxy).finish()
    }
}

/// A rustls client configuration (ring) trusting [`trusted_roots`], built once per process.
pub(crate) fn tls_config() -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, rustls::Error>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            // A system certificate rustls cannot use is skipped, as ureq skips it.
            roots.add_parsable_certificates(trusted_roots().iter().cloned());
            let config =
                rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                    .with_safe_default_protocol_versions()?
                    .with_root_certificates(roots)
                    .with_no_client_auth();
            Ok(Arc::new(config))
        })
        .clone()
}

/// The bundled Mozilla roots plus the platform's (loaded once per process: reading the system
/// store parses a few hundred kilobytes).
fn trusted_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut certs = webpki_root_certs::TLS_SERVER_ROOT_CERTS.to_vec();
        certs.extend(system_certs());
        certs
    })
}

/// [`trusted_roots`] as ureq's root list.
fn root_certs() -> RootCerts {
    static ROOTS: OnceLock<Arc<Vec<Certificate<'static>>>> = OnceLock::new();
    let certs = ROOTS.get_or_init(|| {
        Arc::new(trusted_roots().iter().map(|der| Certificate::from_der(der.as_ref()).to_owned()).collect())
    });
    RootCerts::Specific(Arc::clone(certs))
}

/// The system store, or the files `SSL_CERT_FILE`/`SSL_CERT_DIR` name (OpenSSL's convention,
/// through rustls-native-certs). Unreadable files are a warning: the bundled roots still work
/// for github.com, and a TLS error will name the host if a private CA was needed.
fn system_certs() -> Vec<CertificateDer<'static>> {
    let found = rustls_native_certs::load_native_certs();
    for error in &found.errors {
        crate::warnings::warn(format!("system certificates: {error}"));
    }
    found.certs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_include_the_bundled_ones() {
        let RootCerts::Specific(certs) = root_certs() else { panic!("fcorr always lists its roots") };
        assert!(certs.len() >= webpki_root_certs::TLS_SERVER_ROOT_CERTS.len());
        let config = tls_config().unwrap();
        assert!(config.alpn_protocols.is_empty(), "hyper-rustls sets ALPN itself");
    }

    #[test]
    fn the_first_proxy_variable_set_is_the_proxy_for_every_scheme() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let p = ProxySetting::from_lookup(env(&[("HTTP_PROXY", "http://h:1"), ("https_proxy", "http://s:2")])).unwrap();
        assert_eq!((p.variable, p.url.as_str(), p.no_proxy.as_str()), ("https_proxy", "http://s:2", ""));
        let p =
            ProxySetting::from_lookup(env(&[("ALL_PROXY", " "), ("HTTP_PROXY", "h:3"), ("no_proxy", "x")])).unwrap();
        assert_eq!((p.variable, p.url.as_str(), p.no_proxy.as_str()), ("HTTP_PROXY", "h:3", "x"));
        assert_eq!(ProxySetting::from_lookup(env(&[("NO_PROXY", "x")])), None);
        let p = ProxySetting::from_lookup(env(&[("HTTPS_PROXY", "p:1"), ("NO_PROXY", "*.corp, localhost ,*,.x")]));
        assert_eq!(p.unwrap().no_proxy, ".corp,localhost,*,.x");
    }

    #[test]
    fn a_proxy_password_is_never_shown() {
        let p =
            ProxySetting { variable: "HTTPS_PROXY", url: "http://me:s3cret@proxy:3128/".into(), no_proxy: "".into() };
        assert_eq!(p.shown(), "HTTPS_PROXY (http://proxy:3128)");
        assert!(!format!("{p:?}").contains("s3cret"));
        let p = ProxySetting { variable: "HTTP_PROXY", url: "proxy:3128".into(), no_proxy: "".into() };
        assert_eq!(p.shown(), "HTTP_PROXY (proxy:3128)");
    }
}
