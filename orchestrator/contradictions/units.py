"""Units a value may be written in, and how each converts to its dimension's base unit (pure).

"250 ms" and "0.25 s", "26.2 miles" and "42.2 km", "104 °F" and "40 °C" are one value each; a
number followed by a word that is no unit ("120 patients") counts that word instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A dimension's base unit and the affine map into it: ``base = value * factor + offset``."""

    base: str
    factor: float = 1.0
    offset: float = 0.0


def _table() -> dict[str, Unit]:
    table: dict[str, Unit] = {}

    def add(base: str, factor: float, names: str, offset: float = 0.0) -> None:
        for name in names.split("|"):
            table[name] = Unit(base, factor, offset)

    add("%", 1, "%|percent|per cent|pct|percentage")
    add("percentage points", 1, "pp|percentage point|percentage points|points|point")
    add("s", 1e-9, "ns|nanosecond|nanoseconds")
    add("s", 1e-6, "µs|μs|us|microsecond|microseconds")
    add("s", 1e-3, "ms|msec|millisecond|milliseconds")
    add("s", 1, "s|sec|secs|second|seconds")
    add("s", 60, "min|mins|minute|minutes")
    add("s", 3600, "h|hr|hrs|hour|hours")
    add("s", 86400, "day|days")
    add("s", 604800, "week|weeks")
    add("s", 2629800, "month|months")
    add("s", 31557600, "year|years|yr|yrs")
    add("m", 1e-9, "nm|nanometre|nanometres|nanometer|nanometers")
    add("m", 1e-6, "µm|μm|micrometre|micrometres|micrometer|micrometers|micron|microns")
    add("m", 1e-3, "mm|millimetre|millimetres|millimeter|millimeters")
    add("m", 1e-2, "cm|centimetre|centimetres|centimeter|centimeters")
    add("m", 1, "m|metre|metres|meter|meters")
    add("m", 1e3, "km|kilometre|kilometres|kilometer|kilometers")
    add("m", 0.0254, "inch|inches")
    add("m", 0.3048, "ft|foot|feet")
    add("m", 0.9144, "yd|yard|yards")
    add("m", 1609.344, "mile|miles|mi")
    add("m", 1852, "nautical mile|nautical miles|nmi")
    add("m/s", 1 / 3.6, "km/h|kph|kmh|kilometres per hour|kilometers per hour")
    add("m/s", 0.44704, "mph|miles per hour")
    add("m/s", 1, "m/s")
    add("m²", 1, "m²|m2|square metre|square metres|square meter|square meters")
    add("m²", 1e4, "ha|hectare|hectares")
    add("m²", 4046.8564224, "acre|acres")
    add("m²", 1e6, "km²|km2|sq km|square kilometre|square kilometres|square kilometer|square kilometers")
    add("m²", 1e-4, "cm²|cm2|sq cm|square centimetre|square centimetres|square centimeter|square centimeters")
    add("m²", 1e-6, "mm²|mm2|sq mm|square millimetre|square millimetres|square millimeter|square millimeters")
    add("m²", 0.09290304, "ft²|ft2|sq ft|square foot|square feet")
    add("m²", 2589988.110336, "mi²|mi2|sq mi|square mile|square miles")
    add("m³", 1, "m³|m3|cubic metre|cubic metres|cubic meter|cubic meters")
    add("m³", 1e9, "km³|km3|cubic kilometre|cubic kilometres|cubic kilometer|cubic kilometers")
    add("m³", 1e-6, "cm³|cm3|cc|cubic centimetre|cubic centimetres|cubic centimeter|cubic centimeters")
    add("m³", 1e-9, "mm³|mm3|cubic millimetre|cubic millimetres|cubic millimeter|cubic millimeters")
    add("m³", 0.028316846592, "ft³|ft3|cubic foot|cubic feet")
    add("m³", 1e-3, "l|litre|litres|liter|liters")
    add("m³", 1e-6, "ml|millilitre|millilitres|milliliter|milliliters")
    add("m³", 1e-9, "µl|μl|microlitre|microlitres|microliter|microliters")
    add("m³", 1e-4, "dl|decilitre|decilitres|deciliter|deciliters")
    add("m³", 0.003785411784, "gallon|gallons")
    add("g", 1e-9, "ng|nanogram|nanograms")
    add("g", 1e-6, "µg|μg|mcg|microgram|micrograms")
    add("g", 1e-3, "mg|milligram|milligrams")
    add("g", 1, "g|gram|grams")
    add("g", 1e3, "kg|kilogram|kilograms|kilo|kilos")
    add("g", 1e6, "t|tonne|tonnes|ton|tons|metric ton|metric tons")
    add("g", 453.59237, "lb|lbs|pound weight")
    add("B", 1, "byte|bytes")
    add("B", 1e3, "kb|kilobyte|kilobytes")
    add("B", 1e6, "mb|megabyte|megabytes")
    add("B", 1e9, "gb|gigabyte|gigabytes")
    add("B", 1e12, "tb|terabyte|terabytes")
    add("Hz", 1, "hz|hertz")
    add("Hz", 1e3, "khz|kilohertz")
    add("Hz", 1e6, "mhz|megahertz")
    add("Hz", 1e9, "ghz|gigahertz")
    add("W", 1, "w|watt|watts")
    add("W", 1e3, "kw|kilowatt|kilowatts")
    add("W", 1e6, "mw|megawatt|megawatts")
    add("W", 1e9, "gw|gigawatt|gigawatts")
    add("W", 1e12, "tw|terawatt|terawatts")
    add("Wh", 1, "wh|watt-hour|watt-hours")
    add("Wh", 1e3, "kwh|kilowatt-hour|kilowatt-hours")
    add("Wh", 1e6, "mwh|megawatt-hour|megawatt-hours")
    add("Wh", 1e9, "gwh|gigawatt-hour|gigawatt-hours")
    add("Wh", 1e12, "twh|terawatt-hour|terawatt-hours")
    add("J", 1, "j|joule|joules")
    add("J", 1e3, "kj|kilojoule|kilojoules")
    add("J", 1e6, "mj|megajoule|megajoules")
    add("J", 4184, "kcal|kilocalorie|kilocalories|calories")
    add("Pa", 1, "pa|pascal|pascals")
    add("Pa", 1e3, "kpa|kilopascal|kilopascals")
    add("Pa", 1e6, "mpa|megapascal|megapascals")
    add("Pa", 1e5, "bar|bars")
    add("Pa", 6894.757, "psi")
    add("Pa", 133.322, "mmhg")
    add("°C", 1, "°c|celsius|degrees celsius|degree celsius|°")
    add("°C", 5 / 9, "°f|fahrenheit|degrees fahrenheit|degree fahrenheit", offset=-160 / 9)
    add("x", 1, "x|times|fold|-fold")
    add("usd", 1, "usd|dollar|dollars|us$")
    add("eur", 1, "eur|euro|euros")
    add("gbp", 1, "gbp|pound|pounds|sterling")
    add("eV", 1e12, "tev")
    add("eV", 1e9, "gev")
    add("eV", 1e6, "mev")
    return table


UNITS = _table()
#: Units written with a space inside ("per cent", "km per hour"): tried before single words.
LONGEST_FIRST = sorted((name for name in UNITS if " " in name), key=len, reverse=True)
MULTIPLIERS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9,
               "b": 1e9, "trillion": 1e12, "tn": 1e12}
CURRENCY_SIGNS = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "us$": "usd"}


def unit_named(word: str) -> Unit | None:
    word = " ".join(word.split())
    if word in UNITS:
        return UNITS[word]
    if word.endswith("-fold"):
        return UNITS["fold"]
    return None
