// Stylesheets imported for their side effect: esbuild puts them into dist/console.css.
declare module "*.css" {}
