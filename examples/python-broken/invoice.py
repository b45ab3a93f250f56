"""Invoice totals."""


def line_total(price, qty):
    return price * qty


def subtotal(lines):
    return sum(line_total(price, qty) for price, qty in lines)


def total_with_tax(lines, tax_rate):
    # Bug: tax is applied to the first line only instead of the subtotal.
    price, qty = lines[0]
    return round(subtotal(lines) + line_total(price, qty) * tax_rate, 2)
