//! URL fetching that cannot be turned against the local network: only http
//! and https; every host is resolved by folio, each address checked, and the
//! connection pinned to a checked address (no second DNS lookup to rebind);
//! redirects are followed by hand so each hop is checked the same way.

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use url::Url;

use crate::SourceError;

/// What a fetch may do.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// Allow private, loopback and link-local addresses (off by default).
    pub allow_private: bool,
    pub max_bytes: u64,
    pub timeout: Duration,
    pub max_redirects: u32,
}

/// A fetched resource.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL after redirects.
    pub url: String,
    pub bytes: Vec<u8>,
    pub content_type: Option<String>,
}

/// True for addresses on the public internet: not loopback, private,
/// link-local, shared (CGNAT), multicast, documentation, benchmarking or
/// reserved, including IPv4 embedded in IPv6.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_unspecified()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return public_v4(v4);
    }
    let s = ip.segments();
    let v4 = |high: u16, low: u16| {
        Ipv4Addr::new((high >> 8) as u8, high as u8, (low >> 8) as u8, low as u8)
    };
    // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return public_v4(v4(s[6], s[7]));
    }
    // Local-use NAT64 (64:ff9b:1::/48) translates into a private network.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return false;
    }
    // 6to4 (2002::/16) routes to the IPv4 address in bits 16–47.
    if s[0] == 0x2002 {
        return public_v4(v4(s[1], s[2]));
    }
    // Teredo (2001:0::/32): the server's IPv4 address in bits 32–63, the
    // client's, inverted, in the last 32 bits.
    if s[0] == 0x2001 && s[1] == 0 {
        return public_v4(v4(s[2], s[3])) && public_v4(v4(!s[6], !s[7]));
    }
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || s[0..6] == [0, 0, 0, 0, 0, 0])
}

fn refused(url: &Url, reason: impl Into<String>) -> SourceError {
    SourceError::UrlRefused {
        url: url.to_string(),
        reason: reason.into(),
    }
}

/// Resolves `host` within the time left before `deadline`. The system
/// resolver cannot be interrupted, so it runs on a thread of its own that is
/// left to finish in the background when time runs out.
fn resolve(
    url: &Url,
    host: &str,
    port: u16,
    deadline: Instant,
) -> Result<Vec<SocketAddr>, SourceError> {
    let failed = |reason: String| SourceError::Fetch {
        url: url.to_string(),
        reason,
    };
    // An address literal needs no lookup.
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let (send, receive) = std::sync::mpsc::channel();
    let name = host.to_string();
    std::thread::Builder::new()
        .name("folio-resolve".into())
        .spawn(move || {
            let _ = send.send(
                (name.as_str(), port)
                    .to_socket_addrs()
                    .map(Iterator::collect),
            );
        })
        .map_err(|e| failed(format!("cannot resolve {host}: {e}")))?;
    let remaining = deadline.saturating_duration_since(Instant::now());
    match receive.recv_timeout(remaining) {
        Ok(Ok(addrs)) => Ok(addrs),
        Ok(Err(e)) => Err(failed(format!("cannot resolve {host}: {e}"))),
        Err(_) => Err(failed(format!(
            "resolving {host} took longer than the time limit"
        ))),
    }
}

/// Resolves the URL's host and returns one permitted address.
fn checked_address(
    url: &Url,
    policy: &FetchPolicy,
    deadline: Instant,
) -> Result<SocketAddr, SourceError> {
    let host = url.host_str().ok_or_else(|| refused(url, "no host"))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| refused(url, "no port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs = resolve(url, host, port, deadline)?;
    if addrs.is_empty() {
        return Err(SourceError::Fetch {
            url: url.to_string(),
            reason: format!("{host} has no address"),
        });
    }
    if policy.allow_private {
        return Ok(addrs[0]);
    }
    // Every address must be public: a name that resolves to both a public
    // and a private address is a rebinding attempt.
    if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(refused(
            url,
            format!("{host} resolves to the non-public address {}", bad.ip()),
        ));
    }
    Ok(addrs[0])
}

/// Fetches `url` under `policy`.
pub fn fetch(url: &str, policy: &FetchPolicy) -> Result<Fetched, SourceError> {
    let mut current = Url::parse(url).map_err(|e| SourceError::UrlRefused {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    let deadline = Instant::now() + policy.timeout;
    for _ in 0..=policy.max_redirects {
        if !matches!(current.scheme(), "http" | "https") {
            return Err(refused(
                &current,
                format!("scheme {:?} (only http and https)", current.scheme()),
            ));
        }
        if !current.username().is_empty() || current.password().is_some() {
            return Err(refused(&current, "credentials in URLs are not accepted"));
        }
        let address = checked_address(&current, policy, deadline)?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(SourceError::Fetch {
                url: current.to_string(),
                reason: "timed out".into(),
            });
        }
        let host = current.host_str().unwrap_or_default().to_string();
        // No proxy: a proxy would resolve and connect to the host itself,
        // past the address check and the pinning.
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(remaining)
            .resolve(&host, address)
            .user_agent(concat!("folio/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SourceError::Fetch {
                url: current.to_string(),
                reason: e.to_string(),
            })?;
        let response = client
            .get(current.clone())
            .send()
            .map_err(|e| SourceError::Fetch {
                url: current.to_string(),
                reason: e.to_string(),
            })?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| SourceError::Fetch {
                    url: current.to_string(),
                    reason: format!("{status} without Location"),
                })?;
            current = current.join(location).map_err(|e| SourceError::Fetch {
                url: current.to_string(),
                reason: format!("bad redirect: {e}"),
            })?;
            continue;
        }
        if !status.is_success() {
            return Err(SourceError::Fetch {
                url: current.to_string(),
                reason: format!("HTTP {status}"),
            });
        }
        if let Some(length) = response.content_length().filter(|&l| l > policy.max_bytes) {
            return Err(SourceError::TooLarge {
                input: current.to_string(),
                what: "response",
                limit: policy.max_bytes,
                actual: length,
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut bytes = Vec::new();
        response
            .take(policy.max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| SourceError::Fetch {
                url: current.to_string(),
                reason: e.to_string(),
            })?;
        if bytes.len() as u64 > policy.max_bytes {
            return Err(SourceError::TooLarge {
                input: current.to_string(),
                what: "response",
                limit: policy.max_bytes,
                actual: bytes.len() as u64,
            });
        }
        return Ok(Fetched {
            url: current.to_string(),
            bytes,
            content_type,
        });
    }
    Err(SourceError::Fetch {
        url: url.to_string(),
        reason: format!("more than {} redirects", policy.max_redirects),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_addresses() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "::1",
            "fe80::1",
            "fc00::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::a00:1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "2001:0:4136:e378:8000:63bf:f5ff:fffe",
            "2001:0:a00:1:8000:63bf:f7f7:f7f7",
            "::",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    fn policy() -> FetchPolicy {
        FetchPolicy {
            allow_private: false,
            max_bytes: 1024,
            timeout: Duration::from_secs(5),
            max_redirects: 3,
        }
    }

    #[test]
    fn refuses_bad_schemes_private_hosts_and_credentials() {
        for (url, needle) in [
            ("ftp://example.org/x", "scheme"),
            ("file:///etc/passwd", "scheme"),
            ("http://127.0.0.1:9/", "non-public"),
            ("http://localhost:9/", "non-public"),
            ("http://[::1]:9/", "non-public"),
            ("http://169.254.169.254/latest/meta-data", "non-public"),
            ("http://user:pw@example.org/", "credentials"),
        ] {
            match fetch(url, &policy()) {
                Err(SourceError::UrlRefused { reason, .. }) => {
                    assert!(reason.contains(needle), "{url}: {reason}")
                }
                other => panic!("{url}: expected a refusal, got {other:?}"),
            }
        }
        assert!(matches!(
            fetch("not a url", &policy()),
            Err(SourceError::UrlRefused { .. })
        ));
    }
}
