"""The hosted phone page's country list follows the project's SMS regions (`sms_regions`): the
allowed regions plus a region for each test number, in the page language's name order; every
region when the project allows every region; no list (international numbers only) when none.
A number typed in full with `+` works whatever region is selected."""
import re

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import chromium_driver
from phone_helpers import dev_config
from test_phone_page import Browserless, hidden, latest_code, shot


def regions_config(regions, tests=True):
    config = dev_config()
    project = config["projects"][0]
    if regions is not None:
        project["sms_regions"] = regions
    if not tests:
        del project["test_phone_numbers"]
    return config


def options(page):
    return re.findall(r'<option value="([A-Z]{2})"( selected)?>([^<]*)</option>', page)


def test_the_list_offers_the_allowed_regions_and_the_test_numbers_region(make_gatehouse):
    g = make_gatehouse(config=regions_config(["de", "FR"]))
    # English names: France, Germany, then the United States for the +1 test numbers.
    page = Browserless(g, accept_language="en-US").get("/__/auth/phone").text
    assert [(c, label) for c, _, label in options(page)] == [("FR", "France (+33)"), ("DE", "Germany (+49)"), ("US", "United States (+1)")]
    assert [c for c, sel, _ in options(page) if sel] == ["US"]
    assert "with its country code, starting with +" in page
    # German names and order; the preselected region from Accept-Language.
    page = Browserless(g, accept_language="de-DE").get("/__/auth/phone").text
    assert [c for c, _, _ in options(page)] == ["DE", "FR", "US"]
    assert [c for c, sel, _ in options(page) if sel] == ["DE"]
    assert "Ländervorwahl" in page
    # A preferred region that is not listed: the first listed is preselected.
    page = Browserless(g, accept_language="ja-JP").get("/__/auth/phone").text
    assert [c for c, sel, _ in options(page) if sel] == ["FR"]
    # Repeated requests give the same list (cached per language and region set).
    again = Browserless(g, accept_language="ja-JP").get("/__/auth/phone").text
    assert options(again) == options(page)


def test_a_full_international_number_works_whatever_the_selected_region(make_gatehouse):
    g = make_gatehouse(config=regions_config(["FR", "DE"]))
    s = Browserless(g, accept_language="fr-FR")
    page = s.get("/__/auth/phone")
    assert "indicatif du pays, commençant par +" in page.text
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "region": "FR", "phoneNumber": "+49 151 23456789"})
    assert r.status_code == 200, r.text
    assert latest_code(g, "+4915123456789")["sessionInfo"] == hidden(r.text, "sessionInfo")
    # A region the project does not text, typed in full: refused with the region message.
    page = s.get("/__/auth/phone")
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "region": "FR", "phoneNumber": "+44 7911 123456"})
    assert r.status_code == 400 and "pas envoyer de SMS vers ce pays" in r.text, re.findall(r"id=\"form-error\">([^<]*)", r.text)
    # The re-rendered form still offers only the project's regions.
    assert [c for c, _, _ in options(r.text)] == ["DE", "US", "FR"]  # Allemagne, États-Unis, France


def test_a_test_number_in_national_form_under_its_listed_region(make_gatehouse):
    g = make_gatehouse(config=regions_config(["FR"]))
    s = Browserless(g, accept_language="fr-FR")
    page = s.get("/__/auth/phone")
    assert [c for c, _, _ in options(page.text)] == ["US", "FR"]  # « États-Unis » sorts before « France »
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "region": "US", "phoneNumber": "555 555 0100"})
    assert r.status_code == 200, r.text
    assert hidden(r.text, "sessionInfo")


def test_every_region_when_the_project_allows_every_region(make_gatehouse):
    g = make_gatehouse(config=regions_config(None))
    page = Browserless(g, accept_language="pt-BR").get("/__/auth/phone").text
    assert len(options(page)) > 200
    assert [c for c, sel, _ in options(page) if sel] == ["BR"]


def test_no_region_no_list_and_international_numbers_only(make_gatehouse):
    g = make_gatehouse(config=regions_config([], tests=False))
    s = Browserless(g, accept_language="en")
    page = s.get("/__/auth/phone")
    assert page.status_code == 200
    assert "<select" not in page.text and 'name="region"' not in page.text
    assert "Type the full number with its country code, starting with +." in page.text
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "phoneNumber": "+33 6 12 34 56 78"})
    assert r.status_code == 400 and "We cannot send text messages to this country or region." in r.text
    assert "<select" not in r.text and 'value="+33 6 12 34 56 78"' in r.text


def test_restricted_list_in_chromium(make_gatehouse, output_dir):
    g = make_gatehouse(config=regions_config(["FR", "DE", "ID"]))
    d = chromium_driver()
    try:
        for lang, first, hint in [("en", "France (+33)", "country code"), ("fr", "Allemagne (+49)", "indicatif du pays"),
                                  ("id", "Amerika Serikat (+1)", "kode negara")]:
            d.get(g.url(f"/__/auth/phone?hl={lang}"))
            select = Select(d.find_element(By.ID, "region"))
            labels = [o.text for o in select.options]
            assert len(labels) == 4 and labels[0] == first, labels
            assert hint in d.find_element(By.ID, "number-hint").text
            shot(d, output_dir, f"{lang}-restricted")
        g2 = make_gatehouse(config=regions_config([], tests=False))
        d.get(g2.url("/__/auth/phone?hl=de"))
        assert not d.find_elements(By.ID, "region")
        assert "Ländervorwahl" in d.find_element(By.ID, "number-hint").text
        shot(d, output_dir, "de-no-region")
    finally:
        d.quit()
