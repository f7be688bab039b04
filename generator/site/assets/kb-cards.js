// Code cards (generator/site/cards.py): a code link names a <template> of its page in
// data-kb-card; hovering or focusing the link shows that card, a click or tap pins it open,
// Escape closes it. Without this script the link is the plain link to the forge.
(function () {
  "use strict";
  var LINK = "[data-kb-card]"; // a link to the forge, or a button where there is none
  var card = null;
  var current = null;
  var pinned = false;
  var showTimer = 0;
  var hideTimer = 0;
  var returning = false;

  function linkOf(node) {
    return node && node.closest ? node.closest(LINK) : null;
  }

  function templateOf(link) {
    var found = document.getElementById(link.getAttribute("data-kb-card"));
    return found && found.tagName === "TEMPLATE" ? found : null;
  }

  function make() {
    card = document.createElement("div");
    card.id = "kb-card";
    card.className = "kb-card md-typeset";
    card.setAttribute("role", "dialog");
    card.tabIndex = -1;
    card.hidden = true;
    card.addEventListener("mouseenter", function () { clearTimeout(hideTimer); });
    card.addEventListener("mouseleave", function () { if (!pinned) later(hide); });
    card.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button) return;
      if (button.classList.contains("kb-card__expand")) {
        var focused = document.activeElement === button;
        card.classList.add("kb-card--expanded");
        button.remove();
        if (focused) card.focus();  // (the button is gone: keep the keyboard in the card)
        place();
      } else if (button.classList.contains("kb-card__close")) {
        close();
      }
    });
    document.body.appendChild(card);
  }

  // Whether an event happened in the card: along its path as dispatched, since a control of
  // the card may have left it by the time the page hears of the event ("Show all" does).
  function inCard(event) {
    if (!card) return false;
    var path = event.composedPath ? event.composedPath() : [];
    return path.indexOf(card) !== -1 || card.contains(event.target);
  }

  function later(action) {
    clearTimeout(hideTimer);
    hideTimer = setTimeout(action, 250);
  }

  function show(link) {
    var template = templateOf(link);
    if (!template) return;
    if (!card) make();
    clearTimeout(hideTimer);
    if (current !== link || card.hidden) {
      if (current) current.removeAttribute("aria-expanded");
      var chinese = (document.documentElement.lang || "").indexOf("zh") === 0;
      var closer = document.createElement("button");
      closer.type = "button";
      closer.className = "kb-card__close";
      closer.setAttribute("aria-label", chinese ? "关闭" : "Close");
      closer.textContent = "\u00d7";
      card.replaceChildren(closer, template.content.cloneNode(true));
      card.classList.remove("kb-card--expanded", "kb-card--pinned");
      pinned = false;
      current = link;
      link.setAttribute("aria-describedby", "kb-card");
      card.hidden = false;
      place();
    }
  }

  function pin(link, byKeyboard) {
    show(link);
    if (!card || card.hidden) return;
    pinned = true;
    card.classList.add("kb-card--pinned");
    link.setAttribute("aria-expanded", "true");
    if (byKeyboard) card.focus({ preventScroll: true });
  }

  function hide() {
    if (!card || card.hidden) return;
    card.hidden = true;
    pinned = false;
    if (current) {
      current.removeAttribute("aria-expanded");
      current.removeAttribute("aria-describedby");
    }
    current = null;
  }

  function close() {
    var link = current;
    var focusInside = card && card.contains(document.activeElement);
    hide();
    if (link && focusInside) {
      returning = true; // focus goes back to the link: that must not open the card again
      link.focus({ preventScroll: true });
      returning = false;
    }
  }

  // Below the link, or above it when there is no room below; on a narrow screen the
  // stylesheet makes the card a sheet along the bottom of the screen instead.
  function place() {
    if (!card || !current || card.hidden) return;
    card.style.top = card.style.left = "";
    if (window.matchMedia("(max-width: 44.9375em)").matches) return;
    var box = current.getBoundingClientRect();
    var width = card.offsetWidth;
    var height = card.offsetHeight;
    var root = document.documentElement;
    var left = Math.max(8, Math.min(box.left, root.clientWidth - width - 8));
    var top = box.bottom + 6;
    if (top + height > window.innerHeight - 8 && box.top - height - 6 > 8) {
      top = box.top - height - 6;
    }
    card.style.left = left + window.scrollX + "px";
    card.style.top = top + window.scrollY + "px";
  }

  document.addEventListener("mouseover", function (event) {
    var link = linkOf(event.target);
    if (!link || pinned) return;
    clearTimeout(hideTimer);
    clearTimeout(showTimer);
    showTimer = setTimeout(function () { show(link); }, 150);
  });

  document.addEventListener("mouseout", function (event) {
    var link = linkOf(event.target);
    if (!link || link.contains(event.relatedTarget)) return;
    clearTimeout(showTimer);
    if (!pinned) later(hide);
  });

  document.addEventListener("focusin", function (event) {
    var link = linkOf(event.target);
    if (returning) return;
    if (link) {
      if (!(pinned && current === link)) show(link);
    } else if (card && !card.contains(event.target)) {
      hide();
    }
  });

  document.addEventListener("click", function (event) {
    var link = linkOf(event.target);
    if (!link) {
      if (pinned && !inCard(event)) hide();
      return;
    }
    // A click with a modifier, or on the pinned card's own link, goes to the forge.
    if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
      return;
    }
    if ((pinned && current === link) || !templateOf(link)) return;
    event.preventDefault();
    clearTimeout(showTimer);
    pin(link, event.detail === 0);
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && card && !card.hidden) close();
  });

  window.addEventListener("resize", place);
  // Material's instant navigation swaps the page under the card: close it then.
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(hide);
})();
