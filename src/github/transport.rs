//! The HTTP transport under the GitHub client: octocrab's service stack (base URI, token only to
//! the API) over hyper's client, on a connector that tunnels through the company proxy with HTTP
//! CONNECT (octocrab has no proxy support of its own) and speaks TLS with fcorr's roots.
//! The proxy choice and the roots come from `crate::net`, as the SUT agents' do.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder, MaybeHttpsStream};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo};
use octocrab::service::middleware::base_uri::BaseUriLayer;
use octocrab::{AuthState, OctoBody, Octocrab, OctocrabBuilder};
use tower::ServiceExt;
use tower_http::follow_redirect::FollowRedirectLayer;
use tower_http::follow_redirect::policy::{FilterCredentials, Limited, PolicyExt};

use crate::net::{ProxySetting, Redirects};

/// Longest wait for a TCP connection (to the API, or to the proxy).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Redirects followed at most (artifact downloads take one, to blob storage).
const MAX_REDIRECTS: usize = 10;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why the transport cannot be built: both are settings of the machine, named for the user.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    /// The proxy variable names something fcorr cannot tunnel through.
    #[error("{proxy}: {why}")]
    Proxy { proxy: String, why: &'static str },
    /// rustls refused the TLS settings.
    #[error("cannot set up TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// Called outside the tokio runtime that must drive the client (a bug in fcorr).
    #[error("the GitHub client was made outside its async runtime")]
    NoRuntime,
}

/// An octocrab client for the API at `base` (github.com or a GitHub Enterprise Server URL with
/// its `/api/v3` path) sending `token` to the API only, never along a redirect; `redirects` says
/// whether 3xx answers are followed or handed back. Must be called inside the tokio runtime that
/// will drive its requests (octocrab spawns its worker there).
pub(crate) fn client(base: Uri, token: Option<&str>, redirects: Redirects) -> Result<Octocrab, TransportError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(TransportError::NoRuntime);
    }
    let connector = connector(ProxySetting::from_env())?;
    let hyper = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
    // `Authorization` is dropped on every redirect (not only cross-origin ones): artifact
    // downloads end on blob storage, which must never see the token. `Never` is a limit of
    // zero: the layer stops at the first 3xx and hands it back unfollowed.
    let limit = match redirects {
        Redirects::Follow => MAX_REDIRECTS,
        Redirects::Never => 0,
    };
    let redirects = FollowRedirectLayer::with_policy(
        Limited::new(limit).and::<_, OctoBody, ()>(FilterCredentials::new().block_any()),
    );
    let auth = match token {
        // octocrab adds it to relative routes (the API's own), never to another host.
        Some(token) => AuthState::AccessToken { token: token.to_string().into() },
        None => AuthState::None,
    };
    let octocrab = OctocrabBuilder::new_empty()
        .with_service(hyper)
        .with_layer(&redirects)
        .with_layer(&BaseUriLayer::new(base))
        .with_auth(auth)
        .build();
    // `build` of a custom stack cannot fail (its error type is `Infallible`).
    Ok(match octocrab {
        Ok(octocrab) => octocrab,
        Err(never) => match never {},
    })
}

/// TLS to the destination (https) over [`ProxyConnector`]'s stream.
fn connector(proxy: Option<ProxySetting>) -> Result<HttpsConnector<ProxyConnector>, TransportError> {
    let tls = crate::net::tls_config()?;
    let mut tcp = HttpConnector::new();
    // The https connector above hands https URLs down; TLS is its job, not this one's.
    tcp.enforce_http(false);
    tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
    tcp.set_nodelay(true);
    let tunnel = match proxy {
        Some(setting) => Some(ProxyRoute::new(&setting, tcp.clone(), Arc::clone(&tls))?),
        None => None,
    };
    let inner = ProxyConnector { direct: tcp, tunnel };
    Ok(HttpsConnectorBuilder::new()
        .with_tls_config((*tls).clone())
        .https_or_http()
        .enable_http1()
        .wrap_connector(inner))
}

/// The proxy and the hosts that bypass it.
#[derive(Clone)]
struct ProxyRoute {
    matcher: Arc<Matcher>,
    /// To the proxy itself: TLS when its URL is `https://`.
    to_proxy: HttpsConnector<HttpConnector>,
}

impl ProxyRoute {
    fn new(setting: &ProxySetting, tcp: HttpConnector, tls: Arc<rustls::ClientConfig>) -> Result<Self, TransportError> {
        let error = |why| TransportError::Proxy { proxy: setting.shown(), why };
        let uri: Uri = setting.url.parse().map_err(|_| error("not a URL"))?;
        match uri.scheme_str() {
            None | Some("http") | Some("https") => {}
            Some(_) => return Err(error("only http:// and https:// proxies can carry GitHub API calls")),
        }
        if uri.host().is_none_or(str::is_empty) {
            return Err(error("no host in the proxy URL"));
        }
        let matcher = Matcher::builder().all(setting.url.clone()).no(setting.no_proxy.clone()).build();
        let to_proxy = HttpsConnectorBuilder::new()
            .with_tls_config((*tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        Ok(ProxyRoute { matcher: Arc::new(matcher), to_proxy })
    }
}

/// A TCP connection to the destination, or a CONNECT tunnel to it through the proxy unless
/// `NO_PROXY` exempts the host. Plain http destinations are tunnelled too, as the SUT agents do.
/// The stream is `Http` for a direct link or a plain link to the proxy, `Https` for TLS to an
/// https:// proxy.
#[derive(Clone)]
struct ProxyConnector {
    direct: HttpConnector,
    tunnel: Option<ProxyRoute>,
}

type Stream = MaybeHttpsStream<TokioIo<tokio::net::TcpStream>>;

impl tower::Service<Uri> for ProxyConnector {
    type Response = Stream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Both inner connectors are always ready; each call readies its own clone.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let via = self.tunnel.as_ref().and_then(|route| Some((route.matcher.intercept(&dst)?, route.to_proxy.clone())));
        match via {
            Some((proxy, to_proxy)) => {
                let mut tunnel = Tunnel::new(proxy.uri().clone(), to_proxy);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                let dst = with_port(dst);
                // An `Https` stream here is TLS to an https:// proxy; the destination's own TLS
                // (https connector above) runs inside the tunnel either way.
                Box::pin(async move { Ok(tunnel.oneshot(dst).await?) })
            }
            None => {
                let direct = self.direct.clone();
                Box::pin(async move { Ok(MaybeHttpsStream::Http(direct.oneshot(dst).await?)) })
            }
        }
    }
}

/// `dst` with its port spelled out: the tunnel asks for port 443 when none is given, which is
/// wrong for `http://host/`.
fn with_port(dst: Uri) -> Uri {
    if dst.port().is_some() {
        return dst;
    }
    let port = if dst.scheme_str() == Some("http") { 80 } else { 443 };
    let Some(host) = dst.host() else { return dst };
    let mut parts = dst.clone().into_parts();
    match format!("{host}:{port}").parse() {
        Ok(authority) => {
            parts.authority = Some(authority);
            Uri::from_parts(parts).unwrap_or(dst)
        }
        Err(_) => dst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(url: &str) -> ProxySetting {
        ProxySetting { variable: "HTTPS_PROXY", url: url.into(), no_proxy: "localhost,.corp.example".into() }
    }

    #[test]
    fn ports_are_spelled_out_for_the_tunnel() {
        assert_eq!(with_port("http://ghe.corp/api/v3".parse().unwrap()).to_string(), "http://ghe.corp:80/api/v3");
        assert_eq!(with_port("https://api.github.com/x".parse().unwrap()).to_string(), "https://api.github.com:443/x");
        assert_eq!(with_port("http://127.0.0.1:8080/".parse().unwrap()).to_string(), "http://127.0.0.1:8080/");
    }

    #[test]
    fn unusable_proxies_are_named_without_their_password() {
        let tls = crate::net::tls_config().unwrap();
        let err = ProxyRoute::new(&setting("socks5://me:pw@proxy:1080"), HttpConnector::new(), tls.clone())
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "HTTPS_PROXY (socks5://proxy:1080): only http:// and https:// proxies can carry GitHub API calls"
        );
        assert!(ProxyRoute::new(&setting("http://proxy:3128"), HttpConnector::new(), tls.clone()).is_ok());
        assert!(ProxyRoute::new(&setting("proxy:3128"), HttpConnector::new(), tls).is_ok());
    }

    #[test]
    fn no_proxy_hosts_bypass_the_proxy() {
        let tls = crate::net::tls_config().unwrap();
        let route = ProxyRoute::new(&setting("http://proxy:3128"), HttpConnector::new(), tls).unwrap();
        let via = |url: &str| route.matcher.intercept(&url.parse().unwrap()).map(|p| p.uri().to_string());
        assert_eq!(via("https://api.github.com/").as_deref(), Some("http://proxy:3128/"));
        assert_eq!(via("http://ghe.example.com/").as_deref(), Some("http://proxy:3128/"));
        assert_eq!(via("https://ghe.corp.example/"), None);
        assert_eq!(via("http://localhost:8080/"), None);
    }

    /// `Redirects::Never` hands the 3xx back unfollowed; `Follow` goes on, without the token.
    #[tokio::test]
    async fn the_redirect_rule_is_the_callers() {
        use wiremock::matchers::path;
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        for (rule, status, hops) in [(Redirects::Never, 302, 1), (Redirects::Follow, 200, 2)] {
            server.reset().await;
            let moved = ResponseTemplate::new(302).insert_header("location", format!("{}/elsewhere", server.uri()));
            Mock::given(path("/start")).respond_with(moved).mount(&server).await;
            Mock::given(path("/elsewhere")).respond_with(ResponseTemplate::new(200)).mount(&server).await;
            let client = client(server.uri().parse().unwrap(), Some("ghs_x"), rule).unwrap();
            let request = http::Request::get("/start").body(OctoBody::empty()).unwrap();
            let response = client.execute(request).await.unwrap();
            assert_eq!(response.status().as_u16(), status, "{rule:?}");
            let seen = server.received_requests().await.unwrap();
            assert_eq!(seen.len(), hops, "{rule:?}");
            assert_eq!(seen[0].headers.get("authorization").unwrap(), "Bearer ghs_x");
            assert!(seen.iter().skip(1).all(|r| r.headers.get("authorization").is_none()), "{rule:?}");
        }
    }
}
