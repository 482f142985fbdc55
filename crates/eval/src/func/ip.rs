//! IP network functions: `cidrhost`, `cidrnetmask`, `cidrsubnet`,
//! `cidrsubnets`, on IPv4 and IPv6 prefixes (addresses as `u128`).

use super::spec::{arg_err, call_err, int_arg, p_num, p_str, s, Func, Res};
use super::FuncCtx;
use std::net::{Ipv4Addr, Ipv6Addr};
use terrane_value::{Type, Value};

pub(super) const NAMES: &[&str] = &["cidrhost", "cidrnetmask", "cidrsubnet", "cidrsubnets"];

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "cidrhost" => Func::new(
            vec![p_str("prefix"), p_num("hostnum")],
            Type::String,
            cidrhost,
        ),
        "cidrnetmask" => Func::new(vec![p_str("prefix")], Type::String, cidrnetmask),
        "cidrsubnet" => Func::new(
            vec![p_str("prefix"), p_num("newbits"), p_num("netnum")],
            Type::String,
            cidrsubnet,
        ),
        "cidrsubnets" => Func::new(vec![p_str("prefix")], Type::list(Type::String), cidrsubnets)
            .variadic(p_num("newbits")),
        _ => return None,
    })
}

/// A parsed prefix: the (masked) network address, prefix length and
/// address width in bits (32 or 128).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Net {
    pub addr: u128,
    pub len: u32,
    pub bits: u32,
}

impl Net {
    fn mask(len: u32, bits: u32) -> u128 {
        let all = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        if len == 0 {
            0
        } else {
            all & !((1u128 << (bits - len)) - 1) & all
        }
    }

    pub fn show_addr(&self, a: u128) -> String {
        if self.bits == 32 {
            Ipv4Addr::from(a as u32).to_string()
        } else {
            Ipv6Addr::from(a).to_string()
        }
    }

    pub fn show(&self) -> String {
        format!("{}/{}", self.show_addr(self.addr), self.len)
    }
}

pub(crate) fn parse_cidr(text: &str) -> Option<Net> {
    let (ip, len) = text.split_once('/')?;
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 3 {
        return None;
    }
    let len: u32 = len.parse().ok()?;
    let (addr, bits) = if let Ok(v4) = parse_v4(ip) {
        (u32::from(v4) as u128, 32)
    } else {
        (u128::from(ip.parse::<Ipv6Addr>().ok()?), 128)
    };
    if len > bits {
        return None;
    }
    Some(Net {
        addr: addr & Net::mask(len, bits),
        len,
        bits,
    })
}

/// IPv4 dotted quad; leading zeros are read as decimal, as Terraform does.
fn parse_v4(ip: &str) -> Result<Ipv4Addr, ()> {
    let parts: Vec<&str> = ip.split('.').collect();
    if parts.len() != 4 {
        return Err(());
    }
    let mut o = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(());
        }
        o[i] = p.parse().map_err(|_| ())?;
    }
    Ok(Ipv4Addr::from(o))
}

fn net_arg(a: &[Value]) -> Res<Net> {
    parse_cidr(s(&a[0])).map_or_else(
        || {
            arg_err(
                0,
                format!(
                    "invalid CIDR expression: invalid CIDR address: {}",
                    s(&a[0])
                ),
            )
        },
        Ok,
    )
}

fn cidrhost(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let net = net_arg(a)?;
    let host = int_arg(a, 1)?;
    let host_bits = net.bits - net.len;
    let size: i128 = if host_bits >= 127 {
        i128::MAX
    } else {
        1i128 << host_bits
    };
    let h = host as i128;
    let idx = if h < 0 { size + h } else { h };
    if idx < 0 || idx >= size {
        return arg_err(
            1,
            format!(
                "prefix of {} does not accommodate a host numbered {host}",
                net.len
            ),
        );
    }
    Ok(Value::string(net.show_addr(net.addr | idx as u128)))
}

fn cidrnetmask(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let net = net_arg(a)?;
    if net.bits != 32 {
        return arg_err(
            0,
            format!("IPv6 addresses cannot have a netmask: {}", s(&a[0])),
        );
    }
    Ok(Value::string(
        Ipv4Addr::from(Net::mask(net.len, 32) as u32).to_string(),
    ))
}

fn subnet(net: Net, newbits: i64, num: i64) -> Result<Net, String> {
    let new_len = net.len as i64 + newbits;
    if newbits < 0 || new_len > net.bits as i64 {
        return Err(format!(
            "insufficient address space to extend prefix of {} by {newbits}",
            net.len
        ));
    }
    let max = if newbits >= 127 {
        i128::MAX
    } else {
        1i128 << newbits
    };
    if num < 0 || num as i128 >= max {
        return Err(format!(
            "prefix extension of {newbits} does not accommodate a subnet numbered {num}"
        ));
    }
    let shift = net.bits - new_len as u32;
    let addr = net.addr | ((num as u128) << shift);
    Ok(Net {
        addr,
        len: new_len as u32,
        bits: net.bits,
    })
}

fn cidrsubnet(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let net = net_arg(a)?;
    let (newbits, num) = (int_arg(a, 1)?, int_arg(a, 2)?);
    subnet(net, newbits, num)
        .map(|n| Value::string(n.show()))
        .or_else(call_err)
}

fn last_of(addr: u128, len: u32, bits: u32) -> u128 {
    addr | host_mask(len, bits)
}

fn host_mask(len: u32, bits: u32) -> u128 {
    let span = bits - len;
    if span == 0 {
        0
    } else if span >= 128 {
        u128::MAX
    } else {
        (1u128 << span) - 1
    }
}

fn cidrsubnets(a: &[Value], _: &Type, _: &FuncCtx) -> Res<Value> {
    let net = net_arg(a)?;
    if a.len() == 1 {
        return Ok(Value::list(Type::String, vec![]));
    }
    let first = int_arg(a, 1)?;
    let first_len = net.len as i64 + first;
    if first_len > net.bits as i64 || first < 1 {
        return arg_err(
            1,
            format!(
                "would extend prefix to {first_len} bits, which is too long for an IPv{} address",
                if net.bits == 32 { 4 } else { 6 }
            ),
        );
    }
    let first_len = first_len as u32;
    // The subnet just before the network, so the first "next" is its start.
    let before = if net.bits == 32 {
        net.addr.wrapping_sub(1) & 0xffff_ffff
    } else {
        net.addr.wrapping_sub(1)
    };
    let mut cur_addr = before & Net::mask(first_len, net.bits);
    let mut cur_len = first_len;
    let mut out = Vec::new();
    for i in 1..a.len() {
        let nb = int_arg(a, i)?;
        let len = net.len as i64 + nb;
        if nb < 1 || len > net.bits as i64 {
            return arg_err(
                i,
                format!(
                    "would extend prefix to {len} bits, which is too long for an IPv{} address",
                    if net.bits == 32 { 4 } else { 6 }
                ),
            );
        }
        let len = len as u32;
        let cur_last = last_of(cur_addr, cur_len, net.bits);
        let sub_start = cur_last & Net::mask(len, net.bits);
        let sub_last = sub_start | host_mask(len, net.bits);
        let next = sub_last.wrapping_add(1);
        let next = if net.bits == 32 {
            next & 0xffff_ffff
        } else {
            next
        };
        let rolled = next == 0;
        if rolled || (next & Net::mask(net.len, net.bits)) != net.addr {
            return arg_err(
                i,
                format!(
                    "not enough remaining address space for a subnet with a prefix of {len} bits after {}",
                    Net { addr: cur_addr, len: cur_len, bits: net.bits }.show()
                ),
            );
        }
        cur_addr = next;
        cur_len = len;
        out.push(Value::string(
            Net {
                addr: next,
                len,
                bits: net.bits,
            }
            .show(),
        ));
    }
    Ok(Value::list(Type::String, out))
}

#[cfg(test)]
#[path = "ip_tests.rs"]
mod tests;
