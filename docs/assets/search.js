// The search box reads "^" as a boost ("pass^k" would find nothing); the index splits words
// at "^" (mkdocs.yml's separator), so the box searches the words instead: "pass k".
document.addEventListener(
  "input",
  (event) => {
    const box = event.target;
    if (box instanceof HTMLInputElement && box.matches(".md-search__input") && box.value.includes("^")) {
      box.value = box.value.replaceAll("^", " ");
    }
  },
  true,
);
