from __future__ import annotations

from dominus.valuation.features import FEATURE_NAMES, GROUPS, feature_row, name_features
from dominus.valuation.words import label_words


def test_a_common_english_word_is_one_word_with_its_zipf() -> None:
    features = name_features("voice.com")
    assert features["one_word"] == 1.0
    assert features["label_zipf"] > 4.5
    assert features["word_zipf_5_plus"] == 1.0 or features["word_zipf_4_5"] == 1.0
    assert features["language_en"] == 1.0
    assert features["len_5"] == 1.0
    assert features["pattern_LLLLL"] == 1.0
    assert features["tld_com"] == 1.0
    assert features["com_x_one_word"] == 1.0


def test_two_words_are_found_and_looked_up() -> None:
    found = label_words("agentdash")
    assert found.words == ("agent", "dash")
    assert all(value > 3 for value in found.word_zipfs)
    features = name_features("agentdash.com")
    assert features["two_common_words"] == 1.0
    assert features["one_word"] == 0.0
    assert features["word_coverage"] == 1.0


def test_numeric_names_have_digit_patterns_and_no_words() -> None:
    features = name_features("8364.com")
    assert features["all_digits"] == 1.0
    assert features["pattern_NNNN"] == 1.0
    assert features["has_digit_4"] == 1.0
    assert features["digit_8_share"] == 0.25
    assert features["words"] == 0.0
    assert features["label_zipf"] == 0.0


def test_hyphens_mixed_characters_and_lone_letters() -> None:
    features = name_features("best-4you.net")
    assert features["hyphens"] == 1.0
    assert features["letters_and_digits"] == 1.0
    assert features["tld_net-org"] == 1.0
    # lone letters are frequent tokens in every language: they are not words of the name
    assert label_words("xqzt").word_zipfs == (0.0, 0.0, 0.0, 0.0)
    assert name_features("xqzt.io")["no_vowel"] == 1.0


def test_a_word_of_another_language_is_recognised() -> None:
    features = name_features("casa.es")
    assert features["one_word"] == 1.0
    assert any(features.get(f"language_{code}") for code in ("es", "pt", "it"))


def test_every_feature_has_a_group_and_rows_are_in_order() -> None:
    assert set(GROUPS) == set(FEATURE_NAMES)
    row = feature_row("voice.com")
    assert len(row) == len(FEATURE_NAMES)
    assert row[FEATURE_NAMES.index("len_5")] == 1.0


def test_punycode_labels_have_no_words() -> None:
    assert label_words("xn--bcher-kva").words == ()
