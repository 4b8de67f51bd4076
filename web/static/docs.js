// The API docs page: Swagger UI served by the app itself, reading the app's /openapi.json.
window.ui = SwaggerUIBundle({url: "/openapi.json", dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true});
