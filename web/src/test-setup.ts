import { configure } from "@testing-library/react";

// findBy… and waitFor wait for what the app shows; their default of one
// second is shorter than a render of a whole page in jsdom takes on a
// loaded machine. A right test passes as soon as the element is there.
configure({ asyncUtilTimeout: 10_000 });
