"""Country names and codes as ISO 3166-1 alpha-2, from pycountry's ISO tables (for adapters and baselines)."""

from __future__ import annotations

import functools

# Short names the geo-IP databases behind the vendors' logs use where ISO's names differ.
_ALIASES = {
    "russia": "RU",
    "south korea": "KR",
    "north korea": "KP",
    "iran": "IR",
    "syria": "SY",
    "vietnam": "VN",
    "laos": "LA",
    "bolivia": "BO",
    "venezuela": "VE",
    "tanzania": "TZ",
    "moldova": "MD",
    "taiwan": "TW",
    "czech republic": "CZ",
    "turkey": "TR",
    "macedonia": "MK",
    "ivory coast": "CI",
    "republic of korea": "KR",
    "hong kong": "HK",
    "macao": "MO",
    "palestine": "PS",
    "brunei": "BN",
    "cape verde": "CV",
    "swaziland": "SZ",
    "micronesia": "FM",
    "vatican city": "VA",
    "the netherlands": "NL",
    "uk": "GB",
}


@functools.lru_cache(maxsize=1024)
def country_code(value: str) -> str:
    """The alpha-2 code of a country name or code ("United States", "US", "us", "USA"), or "" when unknown."""
    wanted = value.strip()
    if not wanted:
        return ""
    alias = _ALIASES.get(wanted.lower())
    if alias:
        return alias
    # Imported on first use: loading ISO's tables costs about 30 ms, which no read that never names a country pays.
    import pycountry

    if len(wanted) == 2:
        country = pycountry.countries.get(alpha_2=wanted.upper())
        return country.alpha_2 if country is not None else ""
    try:
        return str(pycountry.countries.lookup(wanted).alpha_2)
    except LookupError:
        return ""


def geo_code(geo: str) -> str:
    """A login geo as its alpha-2 code whatever the source wrote ("United States", "us"); a value naming no
    country is kept as written."""
    return country_code(geo) or geo
