// The page's side of MCP Apps: the official host bridge, bundled (npm run build) so a
// plain page can use it as window.AppsHost without a module loader.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.AppsHost = { AppBridge, PostMessageTransport };
