from __future__ import annotations

from dominus.valuation.features import name_features
from dominus.valuation.patterns import (
    is_mirrored,
    is_year,
    longest_run,
    pattern_features,
    pinyin_syllables,
)


def test_pinyin_labels_are_spelled_with_the_fewest_syllables() -> None:
    assert pinyin_syllables("haoche") == 2  # hao + che
    assert pinyin_syllables("zhongguo") == 2  # zhong + guo
    assert pinyin_syllables("tianxiadiyi") == 4  # tian + xia + di + yi
    assert pinyin_syllables("voice") == 0  # no syllable starts with "vo"
    assert pinyin_syllables("xqz") == 0
    assert pinyin_syllables("ab12") == 0  # digits are never pinyin
    # five syllables is a phrase, not a name: left out
    assert pinyin_syllables("nihaowoshishui") == 0


def test_digit_patterns() -> None:
    assert is_year("1992") and is_year("2024")
    assert not is_year("1899") and not is_year("8888") and not is_year("199")
    assert is_mirrored("1221") and is_mirrored("1122") and is_mirrored("1212")
    assert is_mirrored("12321")  # a palindrome of 5
    assert not is_mirrored("1234") and not is_mirrored("121")
    assert longest_run("8888") == 4
    assert longest_run("book") == 2
    assert longest_run("") == 0


def test_a_numeric_label_counts_lucky_and_unlucky_digits() -> None:
    features = pattern_features("8864", is_word=False)
    assert features["digit_lucky_share"] == 0.75  # 8, 8, 6 of 4 digits
    assert features["digit_count_4"] == 1.0
    assert features["digit_distinct_share"] == 0.75  # 8, 6, 4 of 4
    assert features["digit_leading_zero"] == 0.0
    assert features["year"] == 0.0
    assert pattern_features("0451", is_word=False)["digit_leading_zero"] == 1.0
    assert pattern_features("8888", is_word=False)["run_3_plus"] == 1.0


def test_short_letter_labels_without_vowels_or_v_are_chinese_premium() -> None:
    assert pattern_features("bxkq", is_word=False)["chinese_premium_letters"] == 1.0
    assert pattern_features("bxkv", is_word=False)["chinese_premium_letters"] == 0.0
    assert pattern_features("bxka", is_word=False)["chinese_premium_letters"] == 0.0
    assert "chinese_premium_letters" not in pattern_features("bxkqtz", is_word=False)


def test_a_known_word_is_not_read_as_pinyin() -> None:
    assert pattern_features("haoche", is_word=False)["pinyin_syllables"] == 2.0
    assert "pinyin" not in pattern_features("bang", is_word=True)
    # "bang" spells one syllable, but a one-syllable name of 4 letters is still pinyin when
    # no word list knows it as a word
    assert pattern_features("bang", is_word=False)["pinyin"] == 1.0


def test_the_patterns_reach_the_model_features_with_their_tld_terms() -> None:
    haoche = name_features("haoche.com")
    assert haoche["pinyin"] == 1.0 and haoche["com_x_pinyin"] == 1.0
    assert name_features("haoche.net")["net_org_x_length"] == 6.0
    assert name_features("haoche.net").get("com_x_pinyin", 0.0) == 0.0
    assert name_features("8888.com")["com_x_all_digits"] == 1.0
    assert name_features("bxkq.com")["com_x_chinese_premium_letters"] == 1.0
    assert name_features("river.io")["tech_x_length"] == 5.0
    assert name_features("river.shop")["new_gtld_x_length"] == 5.0
