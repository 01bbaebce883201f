"""The screenshots of docs/app.md: the app served on 127.0.0.1 with the demo's model and datasets, each tab driven
through its controls in headless chromium (selenium), one PNG per tab.

    make demo
    .venv/bin/python scripts/app_screenshots.py --demo outputs --out docs/images

Needs Debian's chromium and chromium-driver, and the app extra.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo", default="outputs", help="the folder `make demo` wrote (outputs)")
    parser.add_argument("--out", default="docs/images", help="where the PNG files go")
    args = parser.parse_args(argv)
    demo, out = Path(args.demo), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as when
    from selenium.webdriver.support.ui import WebDriverWait

    from trainer_scripts.app.ui import serve

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = serve(str(demo / "qbert-duc"), str(demo / "wikiref"), port=port, block=False)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1500",
                     "--no-proxy-server", "--hide-scrollbars"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)
    wait = WebDriverWait(browser, 60)

    def click(xpath: str) -> None:
        shown = [element for element in browser.find_elements(By.XPATH, xpath) if element.is_displayed()]
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", shown[0])

    def button(element_id: str) -> None:
        click(f"//*[@id='{element_id}']")

    def tab(text: str) -> None:
        click(f"//*[@role='tab' and normalize-space()='{text}']")
        time.sleep(0.5)
        browser.execute_script("window.scrollTo(0, 0);")

    try:
        browser.get(f"http://127.0.0.1:{port}/")
        wait.until(when.presence_of_element_located((By.CSS_SELECTOR, "#query textarea")))
        button("use-example-button")
        wait.until(lambda driver: driver.find_element(By.CSS_SELECTOR, "#query textarea").get_attribute("value"))
        button("summarize-button")
        try:
            wait.until(lambda driver: driver.find_element(By.CSS_SELECTOR, "#summary textarea").get_attribute("value"))
        except Exception:
            browser.save_screenshot(str(out / "failed.png"))
            print(browser.find_element(By.ID, "summary-status").text, file=sys.stderr)
            raise
        time.sleep(1)
        browser.execute_script("window.scrollTo(0, 0);")
        browser.save_screenshot(str(out / "app-summarize.png"))

        tab("Explore")
        button("search-button")
        time.sleep(2)
        button("show-button")
        wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "span.oracle"))
        time.sleep(1)
        browser.execute_script("window.scrollTo(0, 0);")
        browser.save_screenshot(str(out / "app-explore.png"))

        tab("Summarize")
        dataset = browser.find_element(By.CSS_SELECTOR, "#dataset-box textarea")
        dataset.clear()
        dataset.send_keys(str(demo / "duc" / "2007"))
        button("load-dataset-button")
        wait.until(lambda driver: "duc" in driver.find_element(By.ID, "load-status").text)
        tab("Compare")
        button("compare-button")
        wait.until(lambda driver: "ORACLE" in driver.page_source and "Reference summaries" in driver.page_source)
        time.sleep(1)
        browser.execute_script("window.scrollTo(0, 0);")
        browser.save_screenshot(str(out / "app-compare.png"))
    finally:
        browser.quit()
        app.close()
    for name in ("app-summarize", "app-explore", "app-compare"):
        print(out / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
