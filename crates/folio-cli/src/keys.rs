//! `folio keys`: the access keys of a shared server (`folio serve --http
//! --auth keys`). A key is printed once, when created; the store keeps its
//! hash only.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use folio_engine::Engine;
use folio_engine::keys::{NewKey, Scope};

use crate::common::{library, usage};
use crate::output::print_json;

#[derive(Args)]
pub struct KeysArgs {
    #[command(subcommand)]
    pub command: KeysCommand,
}

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Create a key and print it (once: only its hash is kept).
    Create(CreateArgs),
    /// List the keys: names, scopes, libraries, expiry, rate, last use.
    Ls,
    /// Revoke a key: every server refuses it within seconds.
    Revoke { name: String },
}

#[derive(Args)]
pub struct CreateArgs {
    /// The key's name, as logs and audit lines show it (alice, ci-bot).
    pub name: String,
    /// Scopes, comma-separated: search (reads), ingest (writes in its
    /// libraries), admin (delete libraries, schemas, keys).
    #[arg(long, value_delimiter = ',', required = true)]
    pub scope: Vec<String>,
    /// Libraries it may touch, comma-separated (default: every library).
    #[arg(long, value_delimiter = ',')]
    pub libraries: Vec<String>,
    /// Lifetime: 90d, 12h, 30m (default: never expires).
    #[arg(long)]
    pub expires: Option<String>,
    /// Calls it may make: 60/min, 2/s, 1000/h (default: the server's).
    #[arg(long)]
    pub rate: Option<String>,
}

/// A lifetime such as `90d`, `12h`, `30m` or `45s`.
fn lifetime(text: &str) -> Result<Duration> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = number.parse().map_err(|_| {
        usage(format!(
            "--expires {text:?}: a number and a unit (90d, 12h, 30m, 45s)"
        ))
    })?;
    let seconds = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => {
            return Err(usage(format!(
                "--expires {text:?}: the unit is d, h, m or s"
            )));
        }
    };
    if n == 0 {
        return Err(usage("--expires must be more than 0"));
    }
    // Saturated: the engine refuses a lifetime past `MAX_LIFETIME`.
    Ok(Duration::from_secs(n.saturating_mul(seconds)))
}

/// A rate such as `60/min` as calls per minute (rounded up).
pub fn per_minute(text: &str) -> Result<u32> {
    let bad = || {
        usage(format!(
            "--rate {text:?}: calls per unit, as 60/min, 2/s or 1000/h"
        ))
    };
    let (count, unit) = text.trim().split_once('/').ok_or_else(bad)?;
    let count: u64 = count.trim().parse().map_err(|_| bad())?;
    let minutes_per_unit: f64 = match unit.trim() {
        "s" | "sec" | "second" => 1.0 / 60.0,
        "m" | "min" | "minute" => 1.0,
        "h" | "hour" => 60.0,
        _ => return Err(bad()),
    };
    let rate = (count as f64 / minutes_per_unit).ceil();
    if !(1.0..=u32::MAX as f64).contains(&rate) {
        return Err(usage(format!("--rate {text:?}: at least 1 call a minute")));
    }
    Ok(rate as u32)
}

/// An ingest rate such as `500MB/h` as bytes an hour (units B, KB, MB,
/// GB in powers of 1000, KiB, MiB, GiB in powers of 1024; per h or day).
pub fn bytes_per_hour(text: &str) -> Result<u64> {
    let bad = || {
        usage(format!(
            "--ingest-rate {text:?}: bytes per unit, as 500MB/h, 2GiB/day or 100000B/h"
        ))
    };
    let (amount, period) = text.trim().split_once('/').ok_or_else(bad)?;
    let amount = amount.trim();
    let split = amount
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(amount.len());
    let (number, unit) = amount.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let unit: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let hours: f64 = match period.trim() {
        "h" | "hour" => 1.0,
        "d" | "day" => 24.0,
        _ => return Err(bad()),
    };
    let per_hour = (number * unit / hours).ceil();
    if !(1.0..=u64::MAX as f64).contains(&per_hour) {
        return Err(usage(format!(
            "--ingest-rate {text:?}: at least 1 byte an hour"
        )));
    }
    Ok(per_hour as u64)
}

pub fn run(engine: &Engine, args: &KeysArgs, json: bool) -> Result<()> {
    match &args.command {
        KeysCommand::Create(args) => {
            let scopes = args
                .scope
                .iter()
                .map(|s| Scope::parse(s).map_err(|e| usage(e.message)))
                .collect::<Result<BTreeSet<_>>>()?;
            let libraries = if args.libraries.is_empty() {
                None
            } else {
                Some(
                    args.libraries
                        .iter()
                        .map(|l| library(l))
                        .collect::<Result<BTreeSet<_>>>()?,
                )
            };
            let new = NewKey {
                name: args.name.clone(),
                scopes,
                libraries,
                expires_in: args.expires.as_deref().map(lifetime).transpose()?,
                rate_per_minute: args.rate.as_deref().map(per_minute).transpose()?,
            };
            let (key, record) = engine.create_key(&new)?;
            if json {
                let mut value = serde_json::to_value(&record)?;
                value["key"] = key.into();
                if let Some(object) = value.as_object_mut() {
                    object.remove("hash");
                }
                print_json(&value)?;
            } else {
                println!("{key}");
                eprintln!(
                    "key {:?} created: copy it now, it is not shown again (send it as \
                     `Authorization: Bearer <key>`)",
                    record.name
                );
            }
        }
        KeysCommand::Ls => {
            let keys = engine.keys()?;
            if json {
                let listed: Vec<serde_json::Value> = keys
                    .iter()
                    .map(|k| {
                        let mut value = serde_json::to_value(k).unwrap_or_default();
                        if let Some(object) = value.as_object_mut() {
                            object.remove("hash");
                        }
                        value
                    })
                    .collect();
                print_json(&listed)?;
            } else if keys.is_empty() {
                println!("no keys");
            } else {
                for k in keys {
                    println!(
                        "{}\tscopes {}\tlibraries {}\texpires {}\trate {}\tlast used {}",
                        k.name,
                        k.scopes.join(","),
                        k.libraries.map_or("all".into(), |l| l.join(",")),
                        k.expires_at.as_deref().unwrap_or("never"),
                        k.rate_per_minute
                            .map_or("default".into(), |r| format!("{r}/min")),
                        k.last_used_at.as_deref().unwrap_or("never"),
                    );
                }
            }
        }
        KeysCommand::Revoke { name } => {
            engine.revoke_key(name)?;
            if json {
                print_json(&serde_json::json!({"status": "revoked", "name": name}))?;
            } else {
                println!("revoked {name}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_and_rates_read_as_written() {
        assert_eq!(lifetime("90d").unwrap(), Duration::from_secs(90 * 86_400));
        assert_eq!(lifetime("30m").unwrap(), Duration::from_secs(1_800));
        assert!(lifetime("0d").is_err() && lifetime("10y").is_err() && lifetime("d").is_err());
        assert_eq!(per_minute("60/min").unwrap(), 60);
        assert_eq!(per_minute("2/s").unwrap(), 120);
        assert_eq!(per_minute("90/h").unwrap(), 2);
        assert!(per_minute("0/min").is_err() && per_minute("ten/min").is_err());
        assert_eq!(bytes_per_hour("500MB/h").unwrap(), 500_000_000);
        assert_eq!(bytes_per_hour("1.5 GiB/h").unwrap(), 1_610_612_736);
        assert_eq!(bytes_per_hour("2400B/day").unwrap(), 100);
        assert_eq!(bytes_per_hour("1000/h").unwrap(), 1000);
        assert!(bytes_per_hour("0MB/h").is_err() && bytes_per_hour("5XB/h").is_err());
        assert!(bytes_per_hour("5MB").is_err() && bytes_per_hour("5MB/min").is_err());
    }
}
