#!/usr/bin/python3
"""The console's path in a real browser: Debian's headless Chromium driven
by Selenium (python3-selenium, chromium-driver), as a person clicks it.

    tests/console-browser.py BASE NAME PASSWORD SHOTS [--no-js]

BASE is the console's server (http://127.0.0.1:PORT), NAME and PASSWORD
an account whose sandbox is NAME, SHOTS the folder for a screenshot of
each step. The path is issue 29's: sign in, tick "Kitchen refuses
deliveries", order 2 cardamom buns and 1 country loaf, pay with 4242 4242
4242 4242, see the order paid, wait for the dead letters to list the
kitchen's events with "Kitchen answered 503", untick, redrive the
OrderPaid (refused 409, back in the list), redrive the OrderPlaced and
then the OrderPaid, and see the card on the kitchen's board once,
confirmed. Any message the page logs to the console at the level of an
error fails it (a script or style the CSP blocked, a resource that
failed). --no-js runs the same path with JavaScript disabled. Prints
"ok ORDER_ID" and exits 0 when the whole path held, else says where it
failed and exits 1.
"""
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import (NoSuchElementException,
                                        StaleElementReferenceException,
                                        WebDriverException)
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

base, name, password, shots = sys.argv[1:5]
no_js = "--no-js" in sys.argv[5:]
os.makedirs(shots, exist_ok=True)


def browser(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--window-size=1280,1000", "--user-data-dir=" + profile):
        opts.add_argument(a)
    if no_js:
        opts.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


driver = browser(os.path.join(shots, "profile"))
step_no = 0


def fail(why):
    driver.save_screenshot(os.path.join(shots, "failed.png"))
    line = "not ok: %s (at %s)" % (why, driver.current_url)
    # Kept beside the screenshot: prove shows a failing test's output
    # only when verbose.
    with open(os.path.join(shots, "failed.txt"), "w") as f:
        f.write(line + "\n")
    print(line)
    driver.quit()
    sys.exit(1)


def step(label):
    """A screenshot of the step, and no error in the page's console."""
    global step_no
    step_no += 1
    driver.save_screenshot(os.path.join(shots, "%02d-%s.png" % (step_no, label)))
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if errors:
        fail("the page logged errors: %r" % errors)


def left(old):
    """A wait's condition: old, an element of the page a click left, is
    gone. Chromium may also answer that its node "does not belong to the
    document" while the new page replaces it: gone as well."""
    def check(_):
        try:
            old.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return True
            raise
    return check


def loaded_after(action):
    """Runs action (a click that loads a page) and waits until the page
    it left is gone and the new one has its <main>."""
    old = driver.find_element(By.TAG_NAME, "html")
    action()
    # Longer than the 30 s a command may wait for a SQLite lock (the
    # busy timeout), so that a page slowed by one is not taken for none.
    wait = WebDriverWait(driver, 90)
    wait.until(left(old))
    wait.until(expected_conditions.presence_of_element_located(
        (By.TAG_NAME, "main")))


def click(css):
    loaded_after(driver.find_element(By.CSS_SELECTOR, css).click)


def text():
    return driver.find_element(By.TAG_NAME, "main").text


def nav(label):
    loaded_after(driver.find_element(By.LINK_TEXT, label).click)


def holds(check):
    """check(), False while the page it reads is being loaded again."""
    try:
        return check()
    except (NoSuchElementException, StaleElementReferenceException):
        return False


def wait_for(what, check, seconds=90):
    """Loads the page again until check() holds."""
    end = time.time() + seconds
    while not holds(check):
        if time.time() > end:
            fail("timed out waiting for " + what)
        time.sleep(0.5)
        driver.refresh()


def dead_rows():
    """The dead letters as shown: [(type, id, error)], in order (read
    again while the page is still being replaced)."""
    for _ in range(20):
        try:
            return read_dead_rows()
        except StaleElementReferenceException:
            time.sleep(0.2)
    fail("the dead letters page never settled")


def read_dead_rows():
    return [(r.find_element(By.CSS_SELECTOR, ".type").text,
             r.find_element(By.CSS_SELECTOR, ".id").text,
             r.find_element(By.CSS_SELECTOR, ".error").text)
            for r in driver.find_elements(By.CSS_SELECTOR, "#dead tr")
            if r.find_elements(By.CSS_SELECTOR, ".id")]


def redrive(event_type):
    for t, i, _ in dead_rows():
        if t == event_type:
            click('button[name="one"][value="%s"]' % i)
            if "Sent to the queue again" not in text():
                fail("no notice after redriving " + event_type)
            return i
    fail("no %s among the dead letters" % event_type)


def set_kitchen_fault(on):
    nav("Faults")
    box = driver.find_element(By.CSS_SELECTOR, 'input[value="refuses:kitchen"]')
    if box.is_selected() != on:
        box.click()
    click("main form button")
    if "Faults saved." not in text():
        fail("no notice after saving the faults")
    box = driver.find_element(By.CSS_SELECTOR, 'input[value="refuses:kitchen"]')
    if box.is_selected() != on:
        fail("the kitchen's fault is not %s" % ("set" if on else "clear"))


def kitchen_cards(order):
    nav("Boards")
    return [r.text for r in driver.find_elements(By.CSS_SELECTOR, "table.cards tr")
            if order in r.text]


try:
    driver.get(base + "/console/")
    if not driver.current_url.endswith("/console/signin"):
        fail("the console did not ask to sign in")
    step("signin")
    driver.find_element(By.NAME, "name").send_keys(name)
    driver.find_element(By.NAME, "password").send_keys(password)
    click("main form button")
    if not driver.current_url.endswith("/console/s/%s/" % name):
        fail("signing in did not open the order page")
    step("signed-in")

    set_kitchen_fault(True)
    step("kitchen-refuses")

    nav("Order")
    for item, qty in (("cardamom-bun", "2"), ("country-loaf", "1")):
        field = driver.find_element(By.NAME, "qty." + item)
        field.clear()
        field.send_keys(qty)
    click("main form button")
    if "Order placed." not in text():
        fail("no notice after placing")
    order = driver.current_url.split("/orders/")[1].split("?")[0]
    if "2 × cardamom-bun, 1 × country-loaf" not in text():
        fail("the order does not hold 2 cardamom buns and 1 country loaf")
    step("placed")

    driver.find_element(By.NAME, "card").send_keys("4242 4242 4242 4242")
    click('form[action$="/pay"] button')
    if "Payment recorded" not in text():
        fail("no notice after paying")
    step("pay")
    wait_for("the order paid",
             lambda: driver.find_element(By.ID, "status").text == "paid")
    step("paid")

    nav("Dead letters")
    wait_for("the kitchen's events among the dead letters", lambda: sorted(
        (t, e) for t, _, e in dead_rows()) == [
            ("OrderPaid", "Kitchen answered 503"),
            ("OrderPlaced", "Kitchen answered 503")])
    step("dead-letters")

    set_kitchen_fault(False)
    step("kitchen-accepts")

    nav("Dead letters")
    paid = redrive("OrderPaid")
    step("redrive-paid")
    wait_for("the OrderPaid back, refused with 409", lambda: any(
        i == paid and e.startswith("Kitchen answered 409") for _, i, e in dead_rows()))
    step("paid-refused-409")

    placed = redrive("OrderPlaced")
    wait_for("the card placed on the board",
             lambda: len(kitchen_cards(order)) == 1, 60)
    step("card-placed")
    nav("Dead letters")
    again = redrive("OrderPaid")
    if again != paid:
        fail("the OrderPaid came back with another id: %s, not %s"
             % (again, paid))
    wait_for("the card confirmed", lambda: any(
        "confirmed" in c for c in kitchen_cards(order)), 60)
    cards = kitchen_cards(order)
    if len(cards) != 1 or "confirmed" not in cards[0]:
        fail("the kitchen holds %r for the order, not one confirmed card" % cards)
    step("card-confirmed")

    nav("Dead letters")
    if dead_rows():
        fail("dead letters are left: %r" % dead_rows())
    step("no-dead-letters")
    nav("Status")
    step("status")

    click("header form button")
    if not driver.current_url.endswith("/console/signin"):
        fail("signing out did not end on the sign-in page")
    driver.get(base + "/console/s/%s/orders" % name)
    if not driver.current_url.endswith("/console/signin"):
        fail("the session outlived its sign-out")
    step("signed-out")
except SystemExit:
    raise
except Exception as e:  # a missing element, a driver failure
    fail("%s: %s" % (type(e).__name__, str(e).splitlines()[0]))
driver.quit()
print("ok " + order)
