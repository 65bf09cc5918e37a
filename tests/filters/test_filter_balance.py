from hopforge.filters.select import FilterConfig, balance


def _order(groups: dict[str, int]) -> tuple[list[str], dict[str, str]]:
    order, value = [], {}
    for name, size in groups.items():
        for i in range(size):
            tid = f"{name}-{i}"
            order.append(tid)
            value[tid] = name
    return order, value


def test_balance_caps_each_value_at_ratio_times_the_smallest() -> None:
    order, value = _order({"chain": 70, "intersection": 20, "comparison": 10})
    dropped = balance(order, value.__getitem__, "kind", FilterConfig(balance_ratio=3.0))
    # smallest counted group is comparison (10 >= 0.1 * 100): cap 30, the worst 40 chains go
    assert len(dropped) == 40
    assert all(tid.startswith("chain-") and int(tid.split("-")[1]) >= 30 for tid in dropped)
    assert set(dropped.values()) == {"balance:kind=chain"}


def test_a_rare_value_is_kept_whole_and_does_not_set_the_cap() -> None:
    order, value = _order({"chain": 150, "intersection": 100, "comparison": 6})
    dropped = balance(order, value.__getitem__, "kind", FilterConfig(balance_ratio=1.2))
    # comparison (6 of 256 < 10%) is ignored for the cap: 1.2 * 100 = 120 chains stay
    assert len(dropped) == 30 and all(t.startswith("chain-") for t in dropped)
    strict = FilterConfig(balance_ratio=1.2, balance_min_share=0.0)
    # without the share floor the 6 comparisons would cut every group to 8
    assert len(balance(order, value.__getitem__, "kind", strict)) == (150 - 8) + (100 - 8)


def test_balancing_off() -> None:
    order, value = _order({"a": 50, "b": 5})
    assert balance(order, value.__getitem__, "k", FilterConfig(balance_ratio=0.0)) == {}


def test_values_without_a_key_are_not_balanced() -> None:
    order = [f"t{i}" for i in range(40)]
    key = {**{f"t{i}": "2" for i in range(5)}, **{f"t{i}": "3" for i in range(5, 30)}}
    dropped = balance(order, key.get, "hops", FilterConfig(balance_ratio=2.0, balance_min_share=0.0))
    assert set(dropped) == {f"t{i}" for i in range(15, 30)}  # ten unkeyed ones never dropped
