from invoice import line_total, subtotal, total_with_tax


def test_line_total():
    assert line_total(2.5, 4) == 10.0


def test_subtotal():
    assert subtotal([(10.0, 1), (5.0, 2)]) == 20.0


def test_total_with_tax_single_line():
    assert total_with_tax([(100.0, 1)], 0.2) == 120.0


def test_total_with_tax_multiple_lines():
    # Fails: tax is only charged on the first line (expected 24.0, got 22.0).
    assert total_with_tax([(10.0, 1), (5.0, 2)], 0.2) == 24.0
